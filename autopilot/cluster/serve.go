package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// WorkerFlags are the flags of `ralph worker`, as kong reads them. They
// live here, beside what they configure, to keep the command thin.
type WorkerFlags struct {
	Cluster           string        `required:"" env:"RALPH_CLUSTER" placeholder:"URLS" help:"The NATS servers: comma-separated nats:// or tls:// URLs."`
	Creds             string        `type:"existingfile" placeholder:"FILE" help:"NATS credentials file (.creds)."`
	Slots             int           `default:"1" placeholder:"N" help:"How many tasks run at once."`
	Checkouts         string        `type:"path" placeholder:"DIR" help:"Where the clones and worktrees go (default: -C/--dir DIR when given, else $XDG_CACHE_HOME/ralph/worker or ~/.cache/ralph/worker)."`
	AllowRemote       []string      `sep:"none" placeholder:"URL" help:"A repository URL this worker may work on; repeat for more. With none it refuses every task."`
	TrustTaskCommands bool          `help:"Also run the acceptance commands the tasks themselves carry, not only their config's."`
	Name              string        `placeholder:"NAME" help:"The worker's name in results and logs (default: the host name)."`
	Replicas          int           `default:"1" placeholder:"N" help:"Replicas of ralph's streams; must match the coordinator's."`
	AckWait           time.Duration `placeholder:"DURATION" help:"How long a claim lasts unrenewed before its task goes to another worker (default: the workers' consumer's, 60s when new); workers should agree."`
}

// Config is the WorkerConfig the flags say, with loops of the ralph binary
// at ralph.
func (f WorkerFlags) Config(ralph string, log func(string)) WorkerConfig {
	return WorkerConfig{
		Conn:     Options{URLs: []string{f.Cluster}, CredsFile: f.Creds},
		Replicas: f.Replicas,
		AckWait:  f.AckWait,
		Worker: WorkerOptions{
			Checkouts:         Checkouts{Dir: f.Checkouts, Allow: f.AllowRemote},
			Slots:             f.Slots,
			Host:              f.Name,
			Run:               LoopRunner{Ralph: ralph}.Run,
			TrustTaskCommands: f.TrustTaskCommands,
		},
		Log: log,
	}
}

// LogLines logs to w, one line per message, with the time, from any
// goroutine.
func LogLines(w io.Writer) func(string) {
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s ralph worker: %s\n", time.Now().Format(time.RFC3339), msg)
	}
}

// WorkerConfig is what `ralph worker` is given: where the servers are and
// how the worker runs its tasks.
type WorkerConfig struct {
	// Conn says how to reach the NATS servers.
	Conn Options
	// Replicas is the streams' replication, as EnsureStreams takes it; it
	// must match the coordinator's.
	Replicas int
	// AckWait sets the claims' timeout on the workers' shared consumer;
	// zero keeps the consumer's (DefaultAckWait for a new one).
	AckWait time.Duration
	// Worker configures the Worker; its JetStream and Claimer are filled
	// in, and its Log is Log. An empty Checkouts.Dir is ralph/worker in the
	// user's cache directory, an empty Host the host name.
	Worker WorkerOptions
	// Hurry, when it closes after ctx ended, makes the loops stop now
	// (Worker.Hurry).
	Hurry <-chan struct{}
	// Log is told what the worker does; required.
	Log func(msg string)
}

// RunWorker connects to the servers, makes sure ralph's streams exist and
// runs a Worker until ctx ends; then its loops finish their iteration and
// their tasks are handed back. It returns ctx's error once every loop has
// ended, or an error saying what to fix when it cannot start.
func RunWorker(ctx context.Context, cfg WorkerConfig) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	cfg.Conn.Log = cfg.Log
	conn, err := dial(ctx, cfg.Conn, cfg.Replicas)
	if err != nil {
		return err
	}
	defer conn.Close()
	js := conn.JetStream()
	claimer, err := NewClaimer(ctx, js, ClaimerOptions{AckWait: cfg.AckWait, Invalid: func(subject string, err error) {
		cfg.Log(fmt.Sprintf("dropped %s, which is not a task: %v", subject, err))
	}})
	if err != nil {
		return err
	}
	opts := cfg.Worker
	opts.JetStream, opts.Claimer, opts.Log = js, claimer, cfg.Log
	w, err := NewWorker(opts)
	if err != nil {
		return err
	}
	if len(opts.Checkouts.Allow) == 0 {
		cfg.Log("warning: no repository is allowed (--allow-remote URL), so this worker refuses every task")
	}
	cfg.Log(fmt.Sprintf("worker %s: %d slot(s), checkouts in %s, claims last %s; waiting for tasks on %s",
		opts.Host, opts.Slots, opts.Checkouts.Dir, claimer.AckWait(), conn.NATS().ConnectedUrlRedacted()))
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		cfg.Log("stopping: running loops finish their iteration, then their tasks are handed back; interrupt again to stop them now")
		select {
		case <-cfg.Hurry:
			w.Hurry()
		case <-done:
		}
	}()
	err = w.Run(ctx)
	if errors.Is(err, context.Canceled) {
		cfg.Log("stopped")
	}
	return err
}

func (cfg *WorkerConfig) defaults() error {
	opts := &cfg.Worker
	if opts.Slots < 1 || cfg.Replicas < 1 {
		return fmt.Errorf("slots %d and replicas %d: each is at least 1 (--slots, --replicas)", opts.Slots, cfg.Replicas)
	}
	if opts.Checkouts.Dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no directory for the checkouts: %w; pass --checkouts DIR", err)
		}
		opts.Checkouts.Dir = filepath.Join(cache, "ralph", "worker")
	}
	if opts.Host == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("no name for the worker: %w; pass --name NAME", err)
		}
		opts.Host = host
	}
	if cfg.Conn.Name == "" {
		cfg.Conn.Name = "ralph worker on " + opts.Host
	}
	return nil
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/config"
)

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
	// Seed is the file of the worker's signing key; empty is
	// DefaultSeedPath(RoleWorker).
	Seed string
	// TrustCoordinator are the coordinators' public keys, or files of
	// them, whose tasks the worker runs; at least one.
	TrustCoordinator []string
	// Worker configures the Worker; its JetStream, Signer and Claimer are
	// filled in, and its Log is Log. An empty Checkouts.Dir is ralph/worker in the
	// user's cache directory, an empty Host the host name.
	Worker WorkerOptions
	// Hurry, when it closes after ctx ended, makes the loops stop now
	// (Worker.Hurry).
	Hurry <-chan struct{}
	// Logger is told what the worker does; required.
	Logger *slog.Logger
}

// RunWorker connects to the servers, makes sure ralph's streams exist and
// runs a Worker until ctx ends; then its loops finish their iteration and
// their tasks are handed back. It returns ctx's error once every loop has
// ended, or an error saying what to fix when it cannot start.
func RunWorker(ctx context.Context, cfg WorkerConfig) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	if err := CheckCredentials(cfg.Conn); err != nil {
		return err
	}
	signer, trust, err := cfg.keys()
	if err != nil {
		return err
	}
	if len(cfg.Worker.Configs) > 0 {
		if _, err := config.Load(cfg.Worker.Configs...); err != nil {
			return fmt.Errorf("the worker's own config (-c): %w", err)
		}
	}
	// Made once everything it was given checks out, so a mistyped flag
	// leaves nothing behind.
	if err := os.MkdirAll(cfg.Worker.Checkouts.Dir, 0o755); err != nil {
		return fmt.Errorf("the directory of the checkouts (--checkouts): %w", err)
	}
	cfg.Conn.Logger = cfg.Logger
	conn, err := dial(ctx, cfg.Conn, cfg.Replicas)
	if err != nil {
		return err
	}
	defer conn.Close()
	js := conn.JetStream()
	claimer, err := NewClaimer(ctx, js, ClaimerOptions{AckWait: cfg.AckWait, Trust: trust, Invalid: func(subject string, err error) {
		cfg.Logger.Warn(fmt.Sprintf("dropped the task message on %s, run nothing of it: %v", subject, err), attrSubject, subject)
	}})
	if err != nil {
		return err
	}
	opts := cfg.Worker
	opts.JetStream, opts.Signer, opts.Claimer, opts.Logger = js, signer, claimer, cfg.Logger
	w, err := NewWorker(opts)
	if err != nil {
		return err
	}
	if len(opts.Checkouts.Allow) == 0 {
		cfg.Logger.Warn("warning: no repository is allowed (--allow-remote URL), so this worker refuses every task")
	}
	logAt(cfg.Logger, slog.LevelInfo, []any{attrWorker, opts.Host}, "worker %s signs as %s and runs tasks signed by %s; task commands %s",
		opts.Host, signer.PublicKey(), strings.Join(trust.Keys(), ", "), trustedOrNot(opts.TrustTaskCommands))
	logAt(cfg.Logger, slog.LevelInfo, []any{attrWorker, opts.Host}, "worker %s: %d slot(s), checkouts in %s, claims last %s; waiting for tasks on %s",
		opts.Host, opts.Slots, opts.Checkouts.Dir, claimer.AckWait(), conn.NATS().ConnectedUrlRedacted())
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		cfg.Logger.Info("stopping: running loops finish their iteration, then their tasks are handed back; interrupt again to stop them now")
		select {
		case <-cfg.Hurry:
			w.Hurry()
		case <-done:
		}
	}()
	err = w.Run(ctx)
	if errors.Is(err, context.Canceled) {
		cfg.Logger.Info("stopped")
	}
	return err
}

func trustedOrNot(trust bool) string {
	if trust {
		return "run (--trust-task-commands)"
	}
	return "dropped: the loops run this worker's agent (--backend, -c), no hook or command criterion of a task"
}

// keys are the worker's signing key and the coordinators' keys it trusts.
func (cfg *WorkerConfig) keys() (*Signer, *Keyring, error) {
	trust, err := ReadKeyring(RoleCoordinator, cfg.TrustCoordinator)
	if err != nil {
		return nil, nil, &SetupError{Err: fmt.Errorf("--trust-coordinator: %w", err),
			Fix: "give the coordinator's public key (U…), which `ralph cluster pubkey coordinator` prints where it runs, or a file of such keys"}
	}
	if trust.Len() == 0 {
		return nil, nil, &SetupError{Err: errors.New("this worker trusts no coordinator: it runs only tasks signed by a coordinator it trusts"),
			Fix: "pass --trust-coordinator KEY, the public key `ralph cluster keygen coordinator` printed where the autopilot runs " +
				"(or `ralph cluster pubkey coordinator` there)"}
	}
	signer, err := readOwnKey(cfg.Seed, RoleWorker, "pass --seed FILE")
	if err != nil {
		return nil, nil, err
	}
	return signer, trust, nil
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

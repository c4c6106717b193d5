package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/ralph-loop/ralph/internal/linelog"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/redact"
)

type workerCmd struct {
	Cluster           string        `required:"" env:"RALPH_CLUSTER" placeholder:"URLS" help:"The NATS servers: comma-separated nats:// or tls:// URLs."`
	Creds             string        `type:"existingfile" placeholder:"FILE" help:"NATS credentials file (.creds). A server not on this machine needs credentials: this, --nkey, or user:password@ in its URL."`
	NKey              string        `name:"nkey" type:"existingfile" placeholder:"FILE" help:"Authenticate to the NATS servers with the nkey seed in FILE (their authorization lists its public key)."`
	Seed              string        `type:"path" placeholder:"FILE" help:"The worker's signing key, an nkey seed readable by you alone (default: ~/.config/ralph/worker.nk, which ralph cluster keygen worker makes). Results are signed with it."`
	TrustCoordinator  []string      `name:"trust-coordinator" sep:"none" env:"RALPH_TRUST_COORDINATOR" placeholder:"KEY|FILE" help:"A coordinator's public key (U…), or a file of them, whose signed tasks this worker runs; repeat for more. Required: a task signed otherwise, or not signed, runs nothing."`
	Configs           []string      `name:"config" short:"c" type:"path" sep:"none" placeholder:"FILE" help:"The worker's own config, laid over each task's (later wins): its cli: is the agent the loops run, with this machine's credentials. Repeat to merge."`
	Backend           string        `placeholder:"NAME" help:"The agent CLI the loops run (claude, codex, …), over the task's config and -c."`
	Sandbox           string        `placeholder:"MODE" help:"How the loops' agents are confined: off, auto, landlock, bwrap or seatbelt (default: the sandbox of -c, as for the autopilot's slots: auto unless it says otherwise). A task's config cannot change it."`
	Slots             int           `default:"1" placeholder:"N" help:"How many tasks run at once."`
	Checkouts         string        `type:"path" placeholder:"DIR" help:"Where the clones and worktrees go, made if missing (default: -C/--dir DIR when given, else $XDG_CACHE_HOME/ralph/worker or ~/.cache/ralph/worker)."`
	AllowRemote       []string      `sep:"none" placeholder:"URL" help:"A repository URL this worker may work on; repeat for more. With none it refuses every task."`
	TrustTaskCommands bool          `help:"Run what a task's config would run here: its hooks, its agent (cli:, the hats' backend:), its command criteria, and the task's own acceptance commands. Without it they are dropped (and logged), and the loops run this worker's agent."`
	Name              string        `placeholder:"NAME" help:"The worker's name in results and logs (default: the host name)."`
	Replicas          int           `default:"1" placeholder:"N" help:"Replicas of ralph's streams; must match the coordinator's."`
	AckWait           time.Duration `placeholder:"DURATION" help:"How long a claim lasts unrenewed before its task goes to another worker (default: the workers' consumer's, 60s when new); workers should agree."`
}

// workerConfig is the cluster.WorkerConfig the flags say, with loops of the
// ralph binary at ralph.
func (f *workerCmd) workerConfig(ralph string, log *slog.Logger) cluster.WorkerConfig {
	return cluster.WorkerConfig{
		Conn:             cluster.Options{URLs: []string{f.Cluster}, CredsFile: f.Creds, NKeyFile: f.NKey},
		Replicas:         f.Replicas,
		AckWait:          f.AckWait,
		Seed:             f.Seed,
		TrustCoordinator: f.TrustCoordinator,
		Worker: cluster.WorkerOptions{
			Checkouts:         cluster.Checkouts{Dir: f.Checkouts, Allow: f.AllowRemote},
			Slots:             f.Slots,
			Host:              f.Name,
			Run:               cluster.LoopRunner{Ralph: ralph}.Run,
			TrustTaskCommands: f.TrustTaskCommands,
			Configs:           f.Configs,
			Backend:           f.Backend,
		},
		Logger: log,
	}
}

func (workerCmd) Help() string {
	return `Runs an autopilot coordinator's tasks, taken over NATS JetStream, each as a ralph
loop in a worktree under --checkouts DIR: it pushes refs/ralph/wip/<task> after each
iteration and ralph/<task> at the end, and reports how the loop ended. A first
SIGINT or SIGTERM lets the loops end their iteration and hands their tasks back;
a second stops them now (exit 130).

It runs only tasks signed by a coordinator it trusts (--trust-coordinator), and
signs its results with its own key (--seed; make it with ralph cluster keygen
worker). Unless started with --trust-task-commands it runs nothing a task's
config would run on this machine (hooks, its agent, command criteria): the loops
run this worker's agent, from -c and --backend. A server that is not on this
machine needs credentials (--creds, --nkey, or user:password@ in the URL).

Examples:
  ralph worker --cluster tls://h1:4222,tls://h2:4222 --creds ~/.config/ralph/worker.creds --trust-coordinator UC7… -c ~/.config/ralph/worker.yml --allow-remote git@github.com:acme/app.git --slots 2
  ralph worker --cluster nats://127.0.0.1:4222 --trust-coordinator UC7… --backend claude --allow-remote /tmp/shared.git --checkouts /tmp/w1`
}

func (c *workerCmd) Run(ctx context.Context, g *globals) error {
	ralphBin, err := ralphBinary()
	if err != nil {
		return err
	}
	if c.Checkouts == "" && g.dirGiven {
		c.Checkouts = g.Dir // ralph worker --dir DIR works in DIR
	}
	// Its environment's secrets, those a ralph that started it lists and
	// those of its own config (the agent's env:, redact:) are hidden in
	// what it logs, publishes and forwards of its loops' logs.
	redactor := workerRedactor(g, c.Configs)
	sandbox, err := c.sandbox(g, ralphBin)
	if err != nil {
		return err
	}
	cfg := c.workerConfig(ralphBin, workerLogger(g, redactor))
	cfg.Worker.Sandbox = sandbox
	cfg.Worker.Redactor = redactor
	cfg.Hurry = g.signals.Force()
	if err := cluster.RunWorker(ctx, cfg); ctx.Err() == nil {
		return redactErr(redactor, err)
	}
	return exitError{code: exitcode.Interrupted}
}

// workerLogger writes what a worker does to stderr, a line each as
// "TIME ralph worker: what", its secrets hidden; with --debug each line
// also carries its attributes (worker, task, run, attempt).
func workerLogger(g *globals, redactor *redact.Redactor) *slog.Logger {
	level := slog.LevelInfo
	if g.Debug {
		level = slog.LevelDebug
	}
	return slog.New(linelog.New(g.stderr, linelog.Options{Prefix: "ralph worker: ", Level: level, Attrs: g.Debug, Redact: redactor.String}))
}

// workerRedactor is the Redactor of a worker whose own config is the files
// configs, if any. A config that does not load leaves the environment's:
// RunWorker refuses to start with it and says why.
func workerRedactor(g *globals, configs []string) *redact.Redactor {
	if len(configs) == 0 {
		return redactorOf(nil)
	}
	cfg, err := config.Load(configs...)
	if err != nil {
		return redactorOf(nil)
	}
	return newRedactor(g, cfg)
}

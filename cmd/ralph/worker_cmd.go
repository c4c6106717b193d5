package main

import (
	"context"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/redact"
)

type workerCmd struct {
	cluster.WorkerFlags `embed:""`
}

func (workerCmd) Help() string {
	return `Runs an autopilot coordinator's tasks, taken over NATS JetStream, each as a ralph
loop in a worktree under --dir (or --checkouts): it pushes refs/ralph/wip/<task> after each
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
  ralph worker --cluster nats://127.0.0.1:4222 --trust-coordinator UC7… --backend claude --allow-remote /tmp/shared.git --dir /tmp/w1`
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
	logLine := cluster.LogLines(g.stderr)
	cfg := c.Config(ralphBin, func(msg string) { logLine(redactor.String(msg)) })
	cfg.Worker.Redactor = redactor
	cfg.Hurry = g.signals.Force()
	if err := cluster.RunWorker(ctx, cfg); ctx.Err() == nil {
		return redactErr(redactor, err)
	}
	return exitError{code: exitcode.Interrupted}
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

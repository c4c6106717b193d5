package main

import (
	"context"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/exitcode"
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

Example:
  ralph worker --cluster tls://h1:4222,tls://h2:4222 --creds ~/.config/ralph/worker.creds     --trust-coordinator UC7…  -c ~/.config/ralph/worker.yml     --allow-remote git@github.com:acme/app.git --slots 2`
}

func (c *workerCmd) Run(ctx context.Context, g *globals) error {
	ralphBin, err := ralphBinary()
	if err != nil {
		return err
	}
	if c.Checkouts == "" && g.dirGiven {
		c.Checkouts = g.Dir // ralph worker --dir DIR works in DIR
	}
	cfg := c.Config(ralphBin, cluster.LogLines(g.stderr))
	cfg.Hurry = g.signals.Force()
	if err := cluster.RunWorker(ctx, cfg); ctx.Err() == nil {
		return err
	}
	return exitError{code: exitcode.Interrupted}
}

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
	return `Takes an autopilot coordinator's tasks over NATS JetStream and runs a ralph loop
for each in a worktree under --checkouts: it pushes refs/ralph/wip/<task> after
every iteration and ralph/<task> at the end, and reports how the loop ended.
The first SIGINT or SIGTERM lets the loops finish their iteration, pushes their
work and hands their tasks back; a second stops them now. It then exits 130.

Examples:
  ralph worker --cluster nats://nats1:4222,nats://nats2:4222 --allow-remote git@github.com:acme/app.git --slots 2
  RALPH_CLUSTER=tls://nats.example.com:4222 ralph worker --creds w.creds --allow-remote https://github.com/acme/app.git --replicas 3`
}

func (c *workerCmd) Run(ctx context.Context, g *globals) error {
	ralphBin, err := ralphBinary()
	if err != nil {
		return err
	}
	cfg := c.Config(ralphBin, cluster.LogLines(g.stderr))
	cfg.Hurry = g.signals.Force()
	if err := cluster.RunWorker(ctx, cfg); ctx.Err() == nil {
		return err
	}
	return exitError{code: exitcode.Interrupted}
}

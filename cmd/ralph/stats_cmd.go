package main

import (
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/view"
)

type statsCmd struct {
	Since string `placeholder:"D" help:"Count only the runs started since D: a duration back from now (7d, 24h) or a date (2026-11-01, '2026-11-01 09:00')."`
	JSON  bool   `name:"json" help:"Print one JSON object."`
}

func (statsCmd) Help() string {
	return `Adds up the runs of this workspace, the current one and the archived ones, from
their event logs: in all, per config (the file, and the preset -H laid over it)
and per hat. For each: how many runs, how they ended (completed, each limit,
interrupted, stopped, unfinished when ralph was killed, running) and the share
that completed of those that are over; the agent's iterations, the time, the
tokens, and the cost: what is known (reported by the agents, or computed from
tokens at the model's price) and how many iterations ran a model whose price is
unknown, never counted as free. A hat's runs are those it worked in; its
iterations, time, tokens and cost are its own.

Each log is read once, line by line; it changes nothing.

Examples:
  ralph stats
  ralph stats --since 7d
  ralph stats --since 2026-11-01 --json | jq '.configs[] | {name, success_rate}'`
}

func (c *statsCmd) Run(g *globals) error {
	now := time.Now()
	var since time.Time
	if c.Since != "" {
		var err error
		if since, err = flagvalue.ParseSince(c.Since, now); err != nil {
			return err
		}
	}
	st, err := view.ReadStats(g.Dir, since)
	if err != nil {
		return err
	}
	if c.JSON {
		return indentedJSON(g.stdout, st)
	}
	return view.WriteStats(g.stdout, st, time.Local)
}

package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/engine"
)

type statusCmd struct {
	JSON bool       `name:"json" help:"Print the status as one JSON object."`
	Last zeroOrMore `default:"5" placeholder:"N" help:"How many recent events to show (0 for none)."`
}

func (statusCmd) Help() string {
	return `Reads the workspace lock and the run's checkpoint, without changing them, and
says whether a loop is running (and its pid), the run id, iteration n/max, the
current hat, elapsed time, cost, tokens, the last few events, and how the last
run ended.

Examples:
  ralph status
  ralph status --json | jq .iteration`
}

func (c *statusCmd) Run(g *globals) error {
	s, err := engine.ReadStatus(g.Dir, c.Last.n, time.Now())
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	w := g.stdout
	switch {
	case s.Running:
		fmt.Fprintf(w, "running: yes (pid %d)\n", s.PID)
	default:
		fmt.Fprintln(w, "running: no")
	}
	if s.RunID == "" {
		fmt.Fprintln(w, "no run in this workspace yet; start one with `ralph loop`")
		return nil
	}
	fmt.Fprintf(w, "run: %s\niteration: %d/%d\n", s.RunID, s.Iteration, s.MaxIter)
	if s.Hat != "" {
		fmt.Fprintf(w, "hat: %s\n", s.Hat)
	}
	fmt.Fprintf(w, "elapsed: %s\ncost: $%.4f\ntokens: %d\npending events: %d\n", s.Elapsed, s.CostUSD, s.Tokens, s.Pending)
	if s.Ended != nil {
		fmt.Fprintf(w, "ended: %s (exit %d) %s\n", s.Ended.Reason, s.Ended.ExitCode, s.Ended.Message)
	}
	if len(s.Recent) > 0 {
		fmt.Fprintln(w, "recent events:")
		for _, ev := range s.Recent {
			fmt.Fprintf(w, "  %s  %-24s %s\n", ev.TS.Local().Format("15:04:05"), ev.Topic, clip(ev.PayloadText(), 60))
		}
	}
	return nil
}

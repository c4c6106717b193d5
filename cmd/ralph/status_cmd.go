package main

import (
	"encoding/json"
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

type statusCmd struct {
	JSON bool                 `name:"json" help:"Print the status as one JSON object."`
	Last flagvalue.ZeroOrMore `default:"5" placeholder:"N" help:"How many recent events to show (0 for none)."`
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
	s, err := api.LoopStatus(g.Dir, c.Last.Count(), time.Now())
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	view.WriteStatus(g.stdout, s)
	return nil
}

package main

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/ralph-loop/ralph/engine"
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
	var corrupt *engine.CorruptStateError
	if errors.As(err, &corrupt) {
		return withHint(err, corruptStateHint)
	}
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

// corruptStateHint says how to recover from a state.json ralph cannot read.
// The event log is the source of truth and the checkpoint can be rebuilt
// from it, which ralph loop does; status only reads, so it must not.
const corruptStateHint = "state.json is only a checkpoint of the event log: `ralph loop --resume` moves it aside to .ralph/state.corrupt.<time>.json and rebuilds the run from the log\n" +
	"`ralph loop --fresh` starts a new run instead, and `ralph events` shows the log meanwhile\n" +
	"or remove .ralph/state.json yourself: the next `ralph loop --resume` rebuilds it the same way"

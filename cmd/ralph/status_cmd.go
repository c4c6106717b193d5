package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/view"
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
	s, err := engine.ReadStatus(g.Dir, c.Last.Count(), time.Now())
	var corrupt *engine.CorruptStateError
	if errors.As(err, &corrupt) {
		return withHint(err, corruptStateHint)
	}
	if err != nil {
		return err
	}
	if s.Ended != nil {
		// The message says what to do next, as the run's summary did.
		ended := *s.Ended
		ended.Message = view.EndMessage(ended)
		s.Ended = &ended
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
	fmt.Fprintf(w, "run: %s\niteration: %d/%d%s\n", s.RunID, s.Iteration, s.MaxIter, confirmationNote(s))
	if s.Hat != "" {
		fmt.Fprintf(w, "hat: %s\n", s.Hat)
	}
	fmt.Fprintf(w, "elapsed: %s\ncost: $%.4f\ntokens: %d\npending events: %d\n", s.Elapsed, s.CostUSD, s.Tokens, s.Pending)
	if s.Ended != nil {
		fmt.Fprintf(w, "ended: %s (exit %d) %s\n", s.Ended.Reason, s.Ended.ExitCode, view.Sanitize(s.Ended.Message))
	}
	if len(s.Recent) > 0 {
		fmt.Fprintln(w, "recent events:")
		for _, ev := range s.Recent {
			// Topics and payloads are the agent's text, which may hold
			// escape sequences and newlines.
			fmt.Fprintf(w, "  %s  %-24s %s\n", ev.TS.Local().Format("15:04:05"), view.Sanitize(ev.Topic), view.Clip(view.Sanitize(ev.PayloadText()), 60))
		}
	}
	return nil
}

// confirmationNote explains an iteration count past max_iterations: the
// iterations that confirm a completion claim are not counted against it.
func confirmationNote(s engine.Status) string {
	switch {
	case s.Confirming:
		return " (confirming the completion claim, not counted against max_iterations)"
	case s.Confirmations > 0:
		return fmt.Sprintf(" (%d confirming a completion claim, not counted against max_iterations)", s.Confirmations)
	}
	return ""
}

// corruptStateHint says how to recover from a state.json ralph cannot read.
// The event log is the source of truth and the checkpoint can be rebuilt
// from it, which ralph loop does; status only reads, so it must not.
const corruptStateHint = "state.json is only a checkpoint of the event log: `ralph loop --resume` moves it aside to .ralph/state.corrupt.<time>.json and rebuilds the run from the log\n" +
	"`ralph loop --fresh` starts a new run instead, and `ralph events` shows the log meanwhile\n" +
	"or remove .ralph/state.json yourself: the next `ralph loop --resume` rebuilds it the same way"

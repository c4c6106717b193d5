package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

type statusCmd struct {
	JSON      bool                 `name:"json" xor:"format" help:"Print the status as one JSON object."`
	Objective bool                 `xor:"format" help:"Print only the run's objective, whole (a prompt shows the beginning and end of a long one)."`
	Last      flagvalue.ZeroOrMore `default:"5" placeholder:"N" help:"How many recent events to show (0 for none)."`
}

func (statusCmd) Help() string {
	return `Reads the workspace lock and the run's checkpoint, without changing them, and
says whether a loop is running (and its pid), the run id, iteration n/max, the
current hat, elapsed time, cost, tokens, the last few events, and how the last
run ended.

Examples:
  ralph status
  ralph status --json | jq .iteration
  ralph status --objective`
}

func (c *statusCmd) Run(g *globals) error {
	s, err := api.LoopStatus(g.Dir, c.Last.Count(), time.Now(), readerRedactor(g.Dir))
	if err != nil {
		return err
	}
	if c.Objective {
		return printObjective(g, s)
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	view.WriteStatus(g.stdout, s)
	if s.Running {
		return nil
	}
	if note := autopilotNote(g.Dir); note != "" {
		fmt.Fprintln(g.stdout, note)
	} else if _, err := os.Stat(runfiles.In(g.Dir).AutopilotState()); err == nil && s.RunID == "" {
		fmt.Fprintln(g.stdout, "an autopilot has run here: `ralph autopilot status` shows it")
	}
	return nil
}

// printObjective prints the objective of the run s is the status of.
func printObjective(g *globals, s runfiles.Status) error {
	if s.RunID == "" {
		return &hint.Error{Err: errors.New("no run here, so no objective"), Fix: "start one with `ralph loop`"}
	}
	_, err := io.WriteString(g.stdout, strings.TrimRight(s.Objective, "\n")+"\n")
	return err
}

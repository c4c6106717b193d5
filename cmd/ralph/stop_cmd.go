package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view/api"
)

type stopCmd struct {
	Now bool `help:"Interrupt the running iteration instead of waiting for it to end."`
}

func (stopCmd) Help() string {
	return `Asks the loop running in this workspace to stop. By default it stops before
the next iteration; --now interrupts the running agent as SIGTERM would. Either
way the run ends with reason "stopped" (exit 1) and continues later with
ralph loop --resume; a chain's step, and its chain with it, with ralph chain
resume. An autopilot is stopped with ralph autopilot stop.

Examples:
  ralph stop
  ralph stop --now`
}

func (c *stopCmd) Run(g *globals) error {
	answer, err := api.StopLoop(g.Dir, c.Now)
	if notRunning, ok := errors.AsType[*runfiles.NotRunningError](err); ok {
		if note := autopilotNote(g.Dir); note != "" {
			return &hint.Error{Err: notRunning, Fix: note}
		}
	}
	return g.say(answer, err)
}

// autopilotNote points a loop's command (status, stop) run where no loop
// runs to the autopilot that runs there: only the autopilot's own
// commands reach it. "" when none runs.
func autopilotNote(dir string) string {
	running, ok := errors.AsType[*autopilot.RunningError](autopilot.Running(dir))
	if !ok {
		return ""
	}
	h := running.Holder
	return fmt.Sprintf("an autopilot runs here (run %s, pid %d, started %s): see it with `ralph autopilot status`, "+
		"stop it with `ralph autopilot stop` (or `ralph autopilot stop --now`)", h.RunID, h.PID, h.StartedAt.Local().Format(time.DateTime))
}

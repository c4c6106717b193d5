package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ralph-loop/ralph/engine"
)

type stopCmd struct {
	Now bool `help:"Interrupt the running iteration instead of waiting for it to end."`
}

func (stopCmd) Help() string {
	return `Asks the loop running in this workspace to stop. By default it stops before
the next iteration; --now interrupts the running agent as SIGTERM would. Either
way the run ends with reason "stopped" (exit 1) and continues later with
ralph loop --resume.

Examples:
  ralph stop
  ralph stop --now`
}

func (c *stopCmd) Run(g *globals) error {
	held, info := engine.LockHeld(filepath.Join(g.Dir, engine.DirName, engine.LockFile))
	if !held {
		return withHint(errors.New("no loop is running in "+g.Dir), "`ralph status` shows how the last run ended")
	}
	mode := engine.StopAtBoundary
	if c.Now {
		mode = engine.StopNow
	}
	if err := engine.RequestStop(g.Dir, mode); err != nil {
		return err
	}
	when := "before its next iteration"
	if c.Now {
		when = "now"
	}
	fmt.Fprintf(g.stdout, "asked run %s (pid %d) to stop %s\n", info.RunID, info.PID, when)
	return nil
}

package main

import "github.com/ralph-loop/ralph/view/api"

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
	return g.say(api.StopLoop(g.Dir, c.Now))
}

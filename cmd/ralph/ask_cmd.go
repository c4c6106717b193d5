package main

import (
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/view/api"
)

type askCmd struct {
	Question string        `arg:"" help:"The question, for a person."`
	Option   []string      `sep:"none" placeholder:"CHOICE" help:"A choice to offer; repeat for more."`
	Timeout  time.Duration `placeholder:"DURATION" help:"How long the run waits for the answer, e.g. 30m (default: human.timeout_seconds)."`
}

func (c *askCmd) Run(g *globals) error {
	id, warning, err := (&emitCmd{}).emitter(g).Ask(c.Question, c.Option, c.Timeout)
	warn(g, warning)
	if err == nil {
		fmt.Fprintln(g.stdout, api.AskedSentence(id))
	}
	return err
}

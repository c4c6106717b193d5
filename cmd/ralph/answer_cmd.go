package main

import (
	"fmt"

	"github.com/ralph-loop/ralph/engine"
)

type answerCmd struct {
	ID   string `arg:"" help:"The question's id (see ralph status); leave it out to answer the pending one."`
	Text string `arg:"" optional:"" help:"The answer; the run's own output says it was heard."`
}

func (c *answerCmd) Run(g *globals) error {
	if c.Text == "" {
		c.ID, c.Text = "", c.ID
	}
	q, err := engine.PendingQuestion(g.Dir)
	if err == nil {
		err = engine.Answer(g.Dir, c.ID, c.Text, "cli")
	}
	if err == nil && q != nil {
		fmt.Fprintf(g.stdout, "answered %s (%s); the run goes on with its next iteration\n", q.ID, q.Text)
	}
	return err
}

package main

import "github.com/ralph-loop/ralph/view/api"

type answerCmd struct {
	ID   string `arg:"" help:"The question's id (see ralph status); leave it out to answer the pending one."`
	Text string `arg:"" optional:"" help:"The answer; the run's own output says it was heard."`
}

func (c *answerCmd) Run(g *globals) error {
	if c.Text == "" {
		c.ID, c.Text = "", c.ID
	}
	return g.say(api.Answer(g.Dir, "", c.ID, c.Text, "cli"))
}

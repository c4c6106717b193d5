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

func (askCmd) Help() string {
	return `Agents run this from their shell tool when a decision is a person's to make.
It appends a human.asked line to the run's log and prints the question's id;
once the iteration ends, no iteration starts until a person answers (ralph
answer, ralph watch, ralph serve's page, a hook) or the timeout passes.
human.on_timeout says what happens then: continue (the asking hat is told no
answer came) or stop (the run ends as no_answer, exit 1).

Examples:
  ralph ask "Keep the v1 API or drop it?" --option keep --option drop
  ralph ask "Which database should the cache use?" --timeout 30m`
}

func (c *askCmd) Run(g *globals) error {
	id, warning, err := (&emitCmd{}).emitter(g).Ask(c.Question, c.Option, c.Timeout)
	warn(g, warning)
	if err == nil {
		fmt.Fprintln(g.stdout, api.AskedSentence(id))
	}
	return err
}

package main

import "github.com/ralph-loop/ralph/view/watch"

type watchCmd struct {
	Task string `placeholder:"ID" help:"Select this task's slot first (an autopilot's task id, or its slot)."`
	Term string `env:"TERM" hidden:"" help:"The terminal's type: dumb gets plain lines."`
}

func (c *watchCmd) Run(g *globals) error {
	return watch.Start(g.signals.Context(), g.stdin, g.stdout, watch.Options{Dir: g.Dir, Task: c.Task, Term: c.Term,
		Redactor: readerRedactor(g.Dir)})
}

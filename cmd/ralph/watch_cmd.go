package main

import "github.com/ralph-loop/ralph/view/watch"

type watchCmd struct {
	Task string `placeholder:"ID" help:"Select this task's slot first (an autopilot's task id, or its slot)."`
	Once bool   `help:"Plain lines only: print the run (or the autopilot) and exit when it ends, rather than wait for the next run and follow it too."`
	Term string `env:"TERM" hidden:"" help:"The terminal's type: dumb gets plain lines."`
}

func (watchCmd) Help() string {
	return `A full-screen view of whatever runs in the workspace: a loop, or an autopilot
and its slots (local, or on workers). It reads ralph's files as they change and
never takes a lock, so it can start, quit and start again, in as many terminals
as you like, without touching the run. Keys: tab for the next slot, arrows to
pick an event, enter to open it, f to follow, a to answer a question, g to
guide the loop, p to pause or resume the autopilot, s s to stop, ? for all of
them, q to quit.

When stdout is not a terminal, or TERM=dumb, it prints plain lines instead:
the header, then the events as ralph events -f prints them. When the run ends
it waits for the next one (a new run, or a resume) and follows it too, until
Ctrl-C; --once exits when the run ends, as ralph events -f does. A chain
(ralph chain run) is followed from step to step, each step's loop in turn,
and watch exits when the chain ends or stops running.

Examples:
  ralph watch                     # beside ralph loop or ralph autopilot
  ralph watch --task T-12         # start on the slot of task T-12
  ralph watch -C ~/src/app
  ralph watch | tee watch.log     # plain lines, run after run
  ralph watch --once > run.log    # plain lines of this run, then exit`
}

func (c *watchCmd) Run(g *globals) error {
	return watch.Start(g.signals.Context(), g.stdin, g.stdout, watch.Options{Dir: g.Dir, Task: c.Task, Term: c.Term, Once: c.Once,
		Redactor: readerRedactor(g.Dir)})
}

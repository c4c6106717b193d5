package main

import (
	"context"
	"log/slog"

	"github.com/ralph-loop/ralph/engine"
)

type loopCmd struct {
	Config        []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge: later files win."`
	Prompt        string   `short:"p" placeholder:"TEXT" xor:"objective" help:"The objective, overriding event_loop.prompt."`
	PromptFile    string   `short:"P" placeholder:"FILE" xor:"objective" help:"Read the objective from FILE."`
	Backend       string   `placeholder:"NAME" help:"Agent backend, overriding cli.backend (claude, codex, gemini, opencode, pi, qwen, copilot, command, …)."`
	MaxIterations int      `placeholder:"N" help:"Stop after N iterations, overriding event_loop.max_iterations."`
	Resume        bool     `xor:"mode" help:"Continue the run in .ralph/ where it stopped."`
	Fresh         bool     `xor:"mode" help:"Archive an unfinished run and start a new one."`
	Wait          bool     `help:"If another loop holds this workspace, wait for it instead of failing."`
}

func (loopCmd) Help() string {
	return `Runs the agent in a loop. Each iteration ralph picks the hat that should act
on the pending events, builds its prompt, runs the agent, reads the events it
published (ralph emit, or <event topic="…"> tags in its last message), and
decides whether to stop. The run's state lives in .ralph/; a run cut off at any
point continues with --resume.

Exit status: 0 completed or cancelled; 1 stopped on failure (consecutive
failures, thrashing, malformed events, stuck, ralph stop); 2 a limit reached
(iterations, runtime, cost, tokens); 3 fatal (bad config or flags, lock held,
backend missing); 130 interrupted.

Examples:
  ralph loop                          # ./ralph.yml, objective from PROMPT.md
  ralph loop -c ralph.yml -p "Add a --json flag to the export command"
  ralph run -P task.md --backend codex --max-iterations 20
  ralph loop --resume                 # after Ctrl-C, a crash or a reboot
  ralph loop --fresh                  # archive the unfinished run, start over`
}

func (c *loopCmd) Run(g *globals, log *slog.Logger, ctx context.Context) error {
	setup, err := c.prepare(g)
	if err != nil {
		return err
	}
	rep := newTextReporter(g.stderr)
	opts := setup.options(g, log, rep, c)
	if opts.Fault, err = crashHook(); err != nil {
		return err
	}
	eng, err := engine.New(opts)
	if err != nil {
		return err
	}
	out, err := eng.Run(ctx)
	if err != nil {
		return err
	}
	return exitError{code: out.ExitCode}
}

func (c *loopCmd) prepare(g *globals) (*loopSetup, error) {
	return prepareLoop(g, loopInputs{
		configs: c.Config, prompt: c.Prompt, promptFile: c.PromptFile,
		backend: c.Backend, maxIterations: c.MaxIterations, resume: c.Resume,
	})
}

package main

import "github.com/ralph-loop/ralph/view/api"

type answerCmd struct {
	ID   string `arg:"" help:"The question's id (see ralph status); leave it out to answer the pending one."`
	Text string `arg:"" optional:"" help:"The answer; the run's own output says it was heard."`
	Task string `placeholder:"TASK" help:"Answer the question the loop of this autopilot task (its id or slot) waits on, from the repository's root; ralph autopilot status lists them."`
}

func (answerCmd) Help() string {
	return `Appends a person's answer to the question the run waits on; the run goes on
with its next iteration, and the hat that asked reads the answer.

An autopilot runs each task's loop in the task's worktree: answer a task's
question from the repository's root with --task, as the autopilot's output,
progress.md and ralph autopilot status print it.

Examples:
  ralph answer "keep the old API"
  ralph answer q-3f2a1c postgres
  ralph answer --task T-12 q-3f2a1c "use sqlite for now"`
}

func (c *answerCmd) Run(g *globals) error {
	if c.Text == "" {
		c.ID, c.Text = "", c.ID
	}
	return g.say(api.Answer(g.Dir, c.Task, c.ID, c.Text, "cli"))
}

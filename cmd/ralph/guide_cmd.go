package main

import "github.com/ralph-loop/ralph/view/api"

type guideCmd struct {
	Text string `arg:"" help:"What the run should know or do differently."`
	Task string `placeholder:"TASK" help:"Guide the loop of this autopilot task (its id or slot), from the repository's root; ralph autopilot status lists them."`
}

func (guideCmd) Help() string {
	return api.GuideHelp + `

ralph watch sends guidance with its g key, the page of ralph serve with its
guidance box, the API with POST /api/guidance, an MCP client with the tool
guide.

Examples:
  ralph guide "keep the public API as it is"
  ralph guide --task T-12 "the flaky test is known; skip it"`
}

func (c *guideCmd) Run(g *globals) error {
	return g.say(api.Guide(g.Dir, c.Task, c.Text))
}

package main

import (
	"context"

	"github.com/ralph-loop/ralph/view/mcp"
)

type mcpCmd struct{}

func (mcpCmd) Help() string {
	return `Serves the Model Context Protocol over stdin and stdout, so an agent or an
editor can read and steer what runs in the workspace: the tools status, events,
emit, ask, answer, stop, pause and resume say what the commands of the same
names print. Register it in the agent's or editor's MCP config with command
"ralph" and args ["mcp", "-C", "/path/to/workspace"].

Examples:
  ralph mcp
  ralph mcp -C ~/src/project`
}

func (mcpCmd) Run(ctx context.Context, g *globals) error {
	return mcp.Serve(ctx, g.Dir, buildVersion(version, buildInfo()), g.stdin, g.stdout, readerRedactor(g.Dir))
}

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/golden"
)

func TestHatsGraphMermaidGolden(t *testing.T) {
	t.Parallel()
	r := newWorkspace(t).ralph("hats", "graph", "--format", "mermaid", "-H", "code-assist")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	golden.Assert(t, "testdata/hats/code-assist.mermaid.golden", r.stdout)
}

// docs/configuration.md shows the same graph.
func TestDocsShowTheCodeAssistGraph(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/configuration.md")
	require.NoError(t, err)
	golden, err := os.ReadFile("testdata/hats/code-assist.mermaid.golden")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "```mermaid\n"+string(golden)+"```\n")
}

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The `ralph pricing` examples of docs/backends.md are lines ralph prints:
// each line of a block after "$ ralph pricing ARGS" (but "…") is in that
// command's output.
func TestDocsPricingExamplesAreReal(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/backends.md")
	require.NoError(t, err)
	start := strings.Index(string(readme), "## Cost")
	require.GreaterOrEqual(t, start, 0)
	block := string(readme[start:])
	block = block[strings.Index(block, "```text\n")+len("```text\n"):]
	block = block[:strings.Index(block, "```")]
	w := newWorkspace(t)
	var out string
	commands := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		switch {
		case strings.HasPrefix(line, "$ ralph "):
			args := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(line, "$ ralph "), "'", ""))
			r := w.ralph(args...)
			require.Equal(t, 0, r.code, r.stderr)
			out, commands = r.stdout, commands+1
		case line != "…":
			assert.Contains(t, out, line+"\n")
		}
	}
	assert.Equal(t, 2, commands)
}

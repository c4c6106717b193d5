package main

import (
	"os"
	"testing"

	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHatsGraphMermaidGolden(t *testing.T) {
	r := newWorkspace(t).ralph("hats", "graph", "--format", "mermaid", "-H", "code-assist")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	golden.Assert(t, "testdata/hats/code-assist.mermaid.golden", r.stdout)
}

func TestHatsGraphFormats(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig)
	ascii := w.ralph("hats", "graph")
	require.Equal(t, 0, ascii.code, ascii.stderr)
	assert.Equal(t, `start
  task.start -> ralph
ralph (coordinator)
  build.task -> builder  (offered)
  build.done -> reviewer  (offered)
  LOOP_COMPLETE -> done  (offered)
builder (Builder)
  build.done -> reviewer
reviewer (Reviewer)
  review.approved -> ralph  (no hat triggers on it)
`, ascii.stdout)
	dot := w.ralph("hats", "graph", "-f", "dot")
	require.Equal(t, 0, dot.code, dot.stderr)
	assert.Contains(t, dot.stdout, `"reviewer" -> "ralph" [label="review.approved", style=dashed];`)
	bad := w.ralph("hats", "graph", "-f", "svg")
	assert.Equal(t, 3, bad.code)
	assert.Contains(t, bad.stderr, `--format must be one of "ascii","mermaid","dot" but got "svg"`)
}

func TestHatsList(t *testing.T) {
	r := newWorkspace(t).ralph("hats", "list", "-H", "tdd")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, `HAT       NAME           TRIGGERS                   PUBLISHES
red       Test writer    task.start, refactor.done  test.red, LOOP_COMPLETE
green     Implementer    test.red                   test.green
refactor  Refactorer     test.green                 refactor.done
ralph     (coordinator)  what no hat takes          (anything)
`, r.stdout)
}

func TestHatsShow(t *testing.T) {
	w := newWorkspace(t)
	r := w.ralph("hats", "show", "reviewer", "-H", "code-assist")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"reviewer (Reviewer)\n  Reviews each step before the next one starts.\n",
		"  build.done               <- builder (build.done)\n",
		"  review.approved          -> planner\n",
		"  review.rejected          -> builder\n",
		"backend:           claude (cli:)\n",
		"instructions:\n  Review the builder's last commit",
	} {
		assert.Contains(t, r.stdout, want)
	}

	r = w.ralph("hats", "show", "reviwer", "-H", "code-assist")
	assert.Equal(t, 3, r.code)
	assert.Equal(t, "ralph: error: no hat \"reviwer\"; did you mean \"reviewer\"?\n"+
		"ralph: hint: the hats are: ralph, planner, builder, reviewer, finalizer\n", r.stderr)
}

func TestHatsUnknownCollection(t *testing.T) {
	r := newWorkspace(t).ralph("hats", "list", "-H", "tdd2")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, `no preset called "tdd2"`)
	assert.Contains(t, r.stderr, "ralph: hint: name a preset (solo, code-assist, tdd, debug, review, research, spec-driven) or a file with hats:")
}

// The README shows the same graph.
func TestReadmeShowsTheCodeAssistGraph(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	golden, err := os.ReadFile("testdata/hats/code-assist.mermaid.golden")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "```mermaid\n"+string(golden)+"```\n")
}

func TestHatsShowCoordinator(t *testing.T) {
	r := newWorkspace(t).ralph("hats", "show", "ralph", "-H", "solo")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "triggers:\n  task.resume              <- ralph, when nothing else is pending\n"+
		"  (anything else)          <- any hat, for a topic no hat triggers on\n")
	assert.Contains(t, r.stdout, "publishes:\n  anything; ralph offers it every exact trigger and the completion topic\n")
}

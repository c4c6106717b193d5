package hats

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteList(t *testing.T) {
	r, _ := reviewLoop(t)
	var b strings.Builder
	require.NoError(t, WriteList(&b, r))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 6, "a header, four hats and the coordinator")
	assert.Regexp(t, `^HAT +NAME +TRIGGERS +PUBLISHES$`, lines[0])
	assert.Regexp(t, `^builder +Builder +build.task, review.rejected +build.done$`, lines[2])
	assert.Regexp(t, `^ralph +\(coordinator\) +what no hat takes +\(anything\)$`, lines[5])
}

func TestWriteHat(t *testing.T) {
	r, topo := reviewLoop(t)
	g := BuildGraph(r, topo)
	h, ok := r.Get("builder")
	require.True(t, ok)
	var b strings.Builder
	g.WriteHat(&b, h, HatDetails{Gates: topo.Gates, Backend: "claude (cli:)"})
	out := b.String()
	assert.Contains(t, out, "builder (Builder)\n")
	assert.Contains(t, out, "\ntriggers:\n  build.task               <- planner (build.task), end (build.task)\n", "end publishes anything, so it is offered build.task")
	assert.Contains(t, out, "  build.done.blocked       -> builder  (sent back when its gate fails)\n")
	assert.Contains(t, out, "backend:           claude (cli:)\ngate:              build.done needs tests_pass\n")

	end, _ := r.Get("end")
	b.Reset()
	g.WriteHat(&b, end, HatDetails{Backend: "codex"})
	assert.Contains(t, b.String(), "unreachable: no hand-off from the starting event leads here")
	assert.NotContains(t, b.String(), "denied tools:")

	b.Reset()
	g.WriteHat(&b, h, HatDetails{Backend: "claude (cli:)", DisallowedTools: []string{"WebFetch", "Bash"}})
	assert.Contains(t, b.String(), "backend:           claude (cli:)\ndenied tools:      WebFetch, Bash\n")
}

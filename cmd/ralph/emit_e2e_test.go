package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A person steering a run that has ended is told so: refused when no loop
// will read the event, warned when a resume will.
func TestE2EEmitAfterTheRunEnded(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())
	require.Equal(t, 0, w.ralph("loop").code)

	r := w.ralph("emit", "build.task", "one more thing")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "has ended (completed): no loop will read this event")
	assert.Contains(t, r.stderr, "--force")
	assert.NotEqual(t, "ralph build.task", last(w.flow()), "nothing appended")

	r = w.ralph("emit", "build.task", "one more thing", "--force")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "agent build.task", last(w.flow()))
}

func TestE2EEmitAfterALimitIsReadOnResume(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())
	require.Equal(t, 2, w.ralph("loop", "--max-iterations", "1").code)

	r := w.ralph("emit", "build.task", "one more thing")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "has ended (max_iterations); the event will be read when the run is resumed with `ralph loop --resume`")
	assert.Equal(t, "agent build.task", last(w.flow()))
}

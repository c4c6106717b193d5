package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While an iteration runs, ralph status names that iteration, not the
// number of iterations finished before it.
func TestE2EStatusDuringAnIteration(t *testing.T) {
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 10\n"+agentCLI())
	w.script(agentScript{Steps: []step{{Write: map[string]string{"working.txt": "{{run}}"}, SleepMS: 120000}}})
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the agent to start working", func() bool {
		_, err := os.Stat(filepath.Join(w.dir, "working.txt"))
		return err == nil
	})

	st := w.ralph("status", "--json")
	require.Equal(t, 0, st.code, st.stderr)
	var status struct {
		Running   bool   `json:"running"`
		Iteration int    `json:"iteration"`
		MaxIter   int    `json:"max_iterations"`
		Hat       string `json:"hat"`
	}
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &status))
	assert.True(t, status.Running)
	assert.Equal(t, 1, status.Iteration, "the first iteration is running")
	assert.Equal(t, 10, status.MaxIter)
	assert.Equal(t, "ralph", status.Hat)
	text := w.ralph("status")
	assert.Contains(t, text.stdout, "iteration: 1/10\n")

	require.Equal(t, 0, w.ralph("stop", "--now").code)
	assert.Equal(t, 1, exitCodeOf(loop.Wait()), stderr.String())
	// Stopped during iteration 1, which did not finish: none did.
	assert.Contains(t, w.ralph("status").stdout, "iteration: 0/10\n")
}

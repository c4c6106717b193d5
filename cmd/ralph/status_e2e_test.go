package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// While an iteration runs, ralph status names that iteration, not the
// number of iterations finished before it.
func TestE2EStatusDuringAnIteration(t *testing.T) {
	t.Parallel()
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

// A loop killed with SIGKILL leaves a run that nothing runs and that did
// not end: ralph status says it is unfinished and how to go on, in text
// and in JSON, ralph serve and ralph mcp say the same, and the resume it
// points to finishes the run.
func TestStatusAfterSIGKILLSaysTheRunIsUnfinished(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 10\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{
		{Sh: `touch "$SCRIPTAGENT_STATE/working"; ` + waitRelease},
		say(tag("LOOP_COMPLETE", "done")),
	}})
	release := filepath.Join(w.state, "release")
	// The killed ralph's agent is left running until it is released.
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o644) })
	loop, _ := w.startRalph("loop")
	waitFor(t, "the agent to start working", func() bool { return fileExists(filepath.Join(w.state, "working")) })
	require.NoError(t, loop.Process.Kill())
	_ = loop.Wait()

	r := w.ralph("status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st runfiles.Status
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.False(t, st.Running)
	assert.Equal(t, runfiles.PhaseRunning, st.Phase, "the phase it was cut off in")
	assert.True(t, st.Unfinished, r.stdout)
	assert.Nil(t, st.Ended)
	assert.Contains(t, st.Hint, "continue it with `ralph loop --resume`")
	assert.Contains(t, r.stdout, `"unfinished": true`)

	text := w.ralph("status")
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "running: no\n")
	assert.Contains(t, text.stdout, "unfinished: cut off in phase running (ralph was killed, or the machine went down); nothing runs it now\n")
	assert.Contains(t, text.stdout, "  continue it with `ralph loop --resume`, or start over with `ralph loop --fresh`")

	assertStatusAsCLI(t, w, startServe(t, w.dir), "loop", "status", "--json")
	sameStatus(t, callTool(t, mcpSession(t, w.dir), "status", nil).ok(t), w.ralph("status", "--json"))

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	r = w.ralph("loop", "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	after := w.status()
	assert.False(t, after.Unfinished, "a run that completed is finished")
	assert.NotContains(t, w.ralph("status").stdout, "unfinished")
}

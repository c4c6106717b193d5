package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task finished on the last allowed iteration succeeds, with the default
// completion_confirmations: 2 too: the iteration that confirms the claim
// is not counted against max_iterations.
func TestE2EClaimOnTheLastAllowedIteration(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI())
	w.script(agentScript{Steps: []step{{Write: map[string]string{"hello.txt": "hello\n"},
		Say: "Done. " + tag("LOOP_COMPLETE", "hello.txt is written")}}})

	r := w.ralph("loop", "-p", "Write hello.txt.", "--max-iterations", "1")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph task.start", "tag LOOP_COMPLETE", "finished ralph success",
		"tag LOOP_COMPLETE", "finished ralph success", "terminate completed"}, w.flow())
	assert.Contains(t, r.stderr, "ended: completed (exit 0)")
	assert.Contains(t, r.stderr, "iteration 1/1: hat ralph")
	assert.Contains(t, r.stderr, "iteration 2: confirming the completion claim, not counted against max_iterations")
	assert.Contains(t, r.stderr, "2 iterations (1 confirming a completion claim, not counted against max_iterations)")
	summary, err := os.ReadFile(filepath.Join(w.dir, ".ralph", "runs", runID(t, w), "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "| iterations | 2 (1 confirming a completion claim, not counted against max_iterations) |")
	assert.Contains(t, w.ralph("status").stdout, "iteration: 2/1 (1 confirming a completion claim, not counted against max_iterations)\n")
}

// The confirmation is free only once per claim: when it does not confirm,
// the run is at its limit.
func TestE2EUnconfirmedClaimOnTheLastAllowedIteration(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI())
	w.script(agentScript{Steps: []step{
		{Write: map[string]string{"hello.txt": "hello\n"}, Say: "Done. " + tag("LOOP_COMPLETE", "hello.txt is written")},
		say("Not done: hello.txt says hello, not hi."),
	}})

	r := w.ralph("loop", "-p", "Write hello.txt.", "--max-iterations", "1")

	assert.Equal(t, 2, r.code, r.stderr)
	assert.Equal(t, []string{"ralph task.start", "tag LOOP_COMPLETE", "finished ralph success",
		"finished ralph success", "ralph task.resume", "terminate max_iterations"}, w.flow())
}

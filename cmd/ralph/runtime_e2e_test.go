package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ralph killed with SIGKILL and resumed later has not been running while
// it was dead: max_runtime_seconds counts the time up to its last recorded
// event, then the resumed run's. The resumed ralph's clock is set 13s
// ahead, as if the user came back that much later.
func TestE2ERuntimeExcludesTheTimeRalphWasKilled(t *testing.T) {
	// Not parallel: the run up to the kill must take well under its 12s of
	// max_runtime_seconds of wall time, which a neighbour's load would eat.
	w := newWorkspace(t)
	w.write("ralph.yml", `event_loop:
  prompt: Do it.
  max_runtime_seconds: 12
  completion_confirmations: 1
  kill_grace_seconds: 1
`+agentCLI())
	w.script(agentScript{ByHat: map[string][]step{"ralph": {
		{Write: map[string]string{"working.txt": "yes"}, SleepMS: 120000},
		say(tag("LOOP_COMPLETE", "done")),
	}}})
	cmd, _ := w.startRalph("loop")
	waitFor(t, "the agent to start working", func() bool {
		_, err := os.Stat(filepath.Join(w.dir, "working.txt"))
		return err == nil
	})
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	r := w.ralphEnv([]string{clockOffsetEnv + "=13s"}, "loop", "--resume")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"ralph task.start", "ralph loop.resumed", "finished ralph interrupted",
		"tag LOOP_COMPLETE", "finished ralph success", "terminate completed"}, w.flow())
	recs := w.events()
	var end struct {
		RuntimeMS int64 `json:"runtime_ms"`
	}
	require.NoError(t, json.Unmarshal(recs[len(recs)-1].Event.Payload, &end))
	assert.Less(t, end.RuntimeMS, int64(12000), "the 13s ralph was dead are not runtime")
}

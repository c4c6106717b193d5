package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While the first iteration of a run whose agent reports no cost (the
// command backend) runs, every view says its cost is unknown, as `ralph
// events` does once it ends: `ralph status`, the header of `ralph watch`
// and the loop's card of `ralph serve`. None shows "$0.0000".
func TestTheViewsNeverShowAnUnknownCostAsZero(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 2\n"+agentCLI())
	w.script(agentScript{Steps: []step{{Sh: `touch "$SCRIPTAGENT_STATE/working"; ` + waitRelease}}})
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the agent at work", func() bool { return fileExists(filepath.Join(w.state, "working")) })

	status := w.ralph("status")
	require.Equal(t, 0, status.code, status.stderr)
	assert.Contains(t, status.stdout, "cost: unknown\n")
	assert.Contains(t, w.ralph("status", "--json").stdout, `"cost_unknown": true`)

	watch := exec.Command(ralphBin, "watch")
	watch.Dir = w.dir
	screen := &lockedWriter{}
	watch.Stdout = screen
	require.NoError(t, watch.Start())
	t.Cleanup(func() { _ = watch.Process.Kill(); _ = watch.Wait() })
	waitFor(t, "ralph watch's header", func() bool { return strings.Contains(screen.String(), " cost ") })
	assert.Contains(t, screen.String(), " cost unknown · tokens 0")

	s := startServe(t, w.dir)
	var board struct {
		Loop struct {
			CostText    string `json:"cost_text"`
			CostUnknown bool   `json:"cost_unknown"`
		} `json:"loop"`
	}
	s.getJSON("/api/dashboard", &board)
	assert.Equal(t, "unknown", board.Loop.CostText)
	assert.True(t, board.Loop.CostUnknown)

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	assert.Equal(t, 2, exitCodeOf(loop.Wait()), stderr.String())
	var its []struct {
		CostText    string `json:"cost_text"`
		RunCostText string `json:"run_cost_text"`
	}
	s.getJSON("/api/iterations", &its)
	require.Len(t, its, 2)
	assert.Equal(t, "unknown", its[1].CostText)
	assert.Equal(t, "unknown", its[1].RunCostText)
	assert.Contains(t, w.ralph("status").stdout, "cost: unknown\n")
}

//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
)

// A ralph killed mid-wave leaves its workers running; the resume stops
// them before it runs them again.
func TestE2EWaveResumeStopsOrphanedWorkers(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", waveConfig+agentCLI())
	sc := waveScript()
	sc.ByHat["reviewer"] = []step{{Sh: `if [ "$RALPH_WAVE_INDEX" != 0 ]; then while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.02; done; fi
"$RALPH_BIN" emit review.done "finding of worker $RALPH_WAVE_INDEX"`}}
	w.script(sc)
	r := w.ralphKilledAt(engine.FaultWaveWorkerFinished+":1", false)
	require.True(t, r.killed, r.stderr)
	var orphans []int
	for i := 1; i <= 2; i++ {
		pgid := w.pidFile(filepath.Join(w.dir, ".ralph", fmt.Sprintf(runfiles.WaveAgentPIDPattern, i+1)))
		require.Positive(t, pgid, "worker %d's group is recorded", i)
		require.NoError(t, syscall.Kill(-pgid, 0), "worker %d is left running by the killed ralph", i)
		orphans = append(orphans, pgid)
	}
	cmd, stderr := w.startRalph("loop", "--resume")
	waitFor(t, "the orphaned workers to be stopped", func() bool {
		for _, pgid := range orphans {
			if syscall.Kill(-pgid, 0) == nil {
				return false
			}
		}
		return true
	})
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), "stopping agent process group")
	assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, w.waveResults())
}

//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// A ralph killed mid-wave leaves its workers running; `ralph doctor`
// reports each, and the resume stops them before it runs them again.
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
	left := findingsOf(doctorState(t, w, "--fix"), view.FindingAgentLeft)
	require.Len(t, left, 2, "each worker left running is reported")
	for i, f := range left {
		assert.Equal(t, filepath.Join(".ralph", fmt.Sprintf(runfiles.WaveAgentPIDPattern, i+2)), f.Path)
		assert.Contains(t, f.What, fmt.Sprintf("process group %d, a wave worker's", orphans[i]))
		assert.Contains(t, f.Fix, fmt.Sprintf("kill -TERM -%d", orphans[i]))
		assert.False(t, f.Fixed, "--fix leaves a group it cannot show is the run's to the resume")
		require.NoError(t, syscall.Kill(-orphans[i], 0), "--fix stopped nothing")
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

// A signal or `ralph stop --now` in the middle of a wave stops every
// worker's process group, ends the run with the interruption's code, and
// leaves it resumable: the resume runs the workers again and merges each
// result once.
func TestE2EWaveInterruptStopsEveryWorker(t *testing.T) {
	cases := []struct {
		name      string
		interrupt func(w *workspace, loop *exec.Cmd)
		code      int
		reason    runfiles.Reason
	}{
		{"SIGINT", func(_ *workspace, loop *exec.Cmd) { require.NoError(t, loop.Process.Signal(syscall.SIGINT)) }, 130, runfiles.ReasonInterrupted},
		{"SIGTERM", func(_ *workspace, loop *exec.Cmd) { require.NoError(t, loop.Process.Signal(syscall.SIGTERM)) }, 130, runfiles.ReasonInterrupted},
		{"stop --now", func(w *workspace, _ *exec.Cmd) {
			r := w.ralph("stop", "--now")
			require.Equal(t, 0, r.code, r.stderr)
		}, 1, runfiles.ReasonStopped},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", waveConfig+agentCLI())
			sc := waveScript()
			sc.ByHat["reviewer"] = []step{{Sh: `touch "$SCRIPTAGENT_STATE/started-$RALPH_WAVE_INDEX"
while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.02; done
"$RALPH_BIN" emit review.done "finding of worker $RALPH_WAVE_INDEX"`}}
			w.script(sc)
			loop, stderr := w.startRalph("loop")
			var groups []int
			waitFor(t, "every worker to start", func() bool {
				groups = groups[:0]
				for i := range 3 {
					pgid := w.pidFile(filepath.Join(w.dir, ".ralph", fmt.Sprintf(runfiles.WaveAgentPIDPattern, i+1)))
					_, err := os.Stat(filepath.Join(w.state, fmt.Sprintf("started-%d", i)))
					if pgid <= 0 || err != nil {
						return false
					}
					groups = append(groups, pgid)
				}
				return true
			})
			tc.interrupt(w, loop)
			err := loop.Wait()
			require.Equal(t, tc.code, exitCodeOf(err), stderr.String())
			for i, pgid := range groups {
				assert.True(t, processGone(-pgid), "worker %d's process group is gone", i+1)
			}
			assert.Contains(t, w.read(".ralph/state.json"), fmt.Sprintf(`"reason": %q`, tc.reason))
			assert.Zero(t, w.countTopic(runfiles.TopicWaveWorkerFinished), "a worker cut off has no result")

			require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
			r := w.ralph("loop", "--resume")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, []string{"worker 0", "worker 1", "worker 2"}, w.waveResults())
			assert.Equal(t, "1", w.stateText("hat-synthesizer.count"))
		})
	}
}

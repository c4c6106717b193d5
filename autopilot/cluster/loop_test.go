//go:build unix

package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/runfiles"
)

// fakeRalph stands in for `ralph loop`: it prints its arguments, starts a
// background process in its group (whose pid it writes to bg.pid), and
// waits for a stop request; then it exits 1, or with hold present waits
// for SIGTERM and exits 130.
const fakeRalph = `#!/bin/sh
echo "args: $*"
trap 'echo "got SIGTERM"; exit 130' TERM
sleep 1000 &
echo $! > bg.pid
touch started
while [ ! -f .ralph/stop ]; do sleep 0.05; done
echo "stopping at the boundary"
if [ -f hold ]; then while :; do sleep 0.05; done; fi
exit 1
`

func startFakeLoop(t *testing.T, script string, hold bool) (cluster.WorkerJob, cluster.WorkerLoop) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ralph")
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	dir, files := t.TempDir(), t.TempDir()
	if hold {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "hold"), nil, 0o644))
	}
	job := cluster.WorkerJob{TaskID: "t-1", Attempt: 1, Dir: dir,
		ConfigFiles:   []string{filepath.Join(files, "1-ralph.yml"), filepath.Join(files, "2-task-commands.yml")},
		ObjectiveFile: filepath.Join(files, "objective.md"), Output: filepath.Join(files, "output.log")}
	h, err := cluster.LoopRunner{Ralph: bin}.Run(context.Background(), job)
	require.NoError(t, err)
	t.Cleanup(func() {
		h.Stop(runfiles.StopAtBoundary)
		h.Stop(runfiles.StopNow)
		h.Wait()
	})
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil },
		long, 10*time.Millisecond, "the loop starts")
	return job, h
}

func waitLoop(t *testing.T, h cluster.WorkerLoop) autopilot.LoopResult {
	t.Helper()
	ch := make(chan autopilot.LoopResult, 1)
	go func() { ch <- h.Wait() }()
	select {
	case r := <-ch:
		return r
	case <-time.After(long):
		require.FailNow(t, "the loop did not end")
		return autopilot.LoopResult{}
	}
}

// The loop's output holds what its agent printed: the user's alone.
func TestLoopRunnerOutputIsPrivate(t *testing.T) {
	job, _ := startFakeLoop(t, fakeRalph, false)
	assert.Equal(t, os.FileMode(0o600), must(os.Stat(job.Output)).Mode().Perm())
}

// A stop at the boundary asks the loop to stop at the end of its
// iteration; when it has ended, nothing of its process group is left.
func TestLoopRunnerStopAtBoundary(t *testing.T) {
	job, h := startFakeLoop(t, fakeRalph, false)
	bg := must(strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(job.Dir, "bg.pid")))))))
	h.Stop(runfiles.StopAtBoundary)
	r := waitLoop(t, h)
	assert.Equal(t, 1, r.ExitCode)
	assert.Equal(t, "ralph loop exited 1: stopping at the boundary", r.Message, "with no state, the output says why")
	out := string(must(os.ReadFile(job.Output)))
	assert.Contains(t, out, "args: loop --quiet -c "+job.ConfigFiles[0]+" -c "+job.ConfigFiles[1]+" -P "+job.ObjectiveFile)
	assert.NotContains(t, out, "SIGTERM")
	assert.True(t, errors.Is(syscall.Kill(bg, 0), syscall.ESRCH), "the loop's background process is gone")
}

// A stop now, after one at the boundary, sends SIGTERM: the loop stops now.
func TestLoopRunnerStopNowSendsSIGTERM(t *testing.T) {
	job, h := startFakeLoop(t, fakeRalph, true)
	h.Stop(runfiles.StopAtBoundary)
	require.Eventually(t, func() bool {
		return strings.Contains(string(must(os.ReadFile(job.Output))), "stopping at the boundary")
	}, long, 10*time.Millisecond)
	h.Stop(runfiles.StopNow)
	r := waitLoop(t, h)
	assert.Equal(t, 130, r.ExitCode)
	assert.Contains(t, string(must(os.ReadFile(job.Output))), "got SIGTERM")
}

// A loop killed by a signal ends with 128 + the signal.
func TestLoopRunnerKilledLoop(t *testing.T) {
	_, h := startFakeLoop(t, "#!/bin/sh\ntouch started\nkill -9 $$\n", false)
	r := waitLoop(t, h)
	assert.Equal(t, 128+9, r.ExitCode)
	assert.Equal(t, "the loop was killed by signal 9 (killed)", r.Message)
}

// The agent a task names reaches the loop as flags, after the configs:
// over the task's and the worker's own.
func TestLoopRunnerPassesTheTasksAgent(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ralph")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > args\n"), 0o755))
	dir, files := t.TempDir(), t.TempDir()
	job := cluster.WorkerJob{TaskID: "t-1", Attempt: 1, Dir: dir, ConfigFiles: []string{"1-ralph.yml"},
		ObjectiveFile: "objective.md", Output: filepath.Join(files, "output.log"),
		Agent: autopilot.Agent{Backend: "codex", Model: "gpt-5"}}
	h, err := cluster.LoopRunner{Ralph: bin}.Run(context.Background(), job)
	require.NoError(t, err)
	waitLoop(t, h)
	assert.Equal(t, []string{"loop", "--quiet", "-c", "1-ralph.yml", "-P", "objective.md", "--backend", "codex", "--model", "gpt-5"},
		strings.Fields(string(must(os.ReadFile(filepath.Join(dir, "args"))))))
}

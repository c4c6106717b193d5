//go:build unix

package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// startGroup starts `sleep` in a process group of its own with env added
// to its environment, and returns its group id and a channel that gets
// its end.
func startGroup(t *testing.T, env ...string) (int, <-chan error) {
	t.Helper()
	p := exec.Command("sleep", "600")
	p.Env = append(os.Environ(), env...)
	p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, p.Start())
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exited <- p.Wait()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return p.Process.Pid, exited
}

// cutOff is a run that a killed ralph left without an end.
func cutOff(runID string) *runfiles.RunState {
	st := runfiles.NewRunState()
	st.RunID = runID
	return st
}

// A ralph killed outright leaves its agent running; the next one stops the
// agent's whole process group before anything else.
func TestOrphanedAgentIsStopped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux shows whose agent a process is")
	}
	dir := t.TempDir()
	w := &warnRecorder{}
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Reporter = w; o.KillGrace = 10 * time.Second; o.Start = runfiles.StartResume })
	require.NoError(t, os.MkdirAll(e.dir, 0o755))

	pgid, exited := startGroup(t, "RALPH_WORKSPACE="+dir, "RALPH_RUN_ID=r1")
	// A ralph killed half-way through rewriting the file leaves the new
	// record's lines first (here without a start time, which is then
	// unknown) and a remnant of an older, longer one after them.
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, runfiles.AgentPIDFile), []byte(strconv.Itoa(pgid)+"\n\n99999\n"), 0o644))

	require.NoError(t, e.stopOrphanedAgent(cutOff("r1")))
	err := <-exited
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	status, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.Equal(t, syscall.SIGTERM, status.Signal(), "SIGTERM first; SIGKILL only after the grace period")
	require.Len(t, w.warnings, 1)
	assert.Contains(t, w.warnings[0], "stopping agent process group "+strconv.Itoa(pgid))
	data, err := os.ReadFile(filepath.Join(e.dir, runfiles.AgentPIDFile))
	require.NoError(t, err)
	assert.Empty(t, data)

	w.warnings = nil
	require.NoError(t, e.stopOrphanedAgent(cutOff("r1")))
	assert.Empty(t, w.warnings, "an empty file names no agent")
}

// agent.pgid can come with the repository: a group is stopped only when
// it is this workspace's agent of the run that was cut off.
func TestAGroupThatIsNotTheRunsAgentIsLeftAlone(t *testing.T) {
	const notShown = "no process in it is an agent of run r1"
	cases := []struct {
		name  string
		start runfiles.StartMode
		prev  *runfiles.RunState
		env   []string
		// recorded is the start time agent.pgid records ("" for none).
		recorded string
		warns    string
	}{
		{"any process of the user's", runfiles.StartResume, cutOff("r1"), nil, "", notShown},
		{"an agent of another run", runfiles.StartResume, cutOff("r1"), []string{"RALPH_WORKSPACE=", "RALPH_RUN_ID=r0"}, "", notShown},
		{"an agent of another workspace", runfiles.StartResume, cutOff("r1"), []string{"RALPH_WORKSPACE=/elsewhere", "RALPH_RUN_ID=r1"}, "", notShown},
		// A repository cannot know when a process of the user's started.
		{"a leader that started at another time", runfiles.StartResume, cutOff("r1"), nil, "12345", "its leader started at another time"},
		{"a new run, not a resume", runfiles.StartNew, cutOff("r1"), []string{"RALPH_WORKSPACE=", "RALPH_RUN_ID=r1"}, "", ""},
		{"no run to resume", runfiles.StartResume, nil, []string{"RALPH_WORKSPACE=", "RALPH_RUN_ID=r1"}, "", ""},
		{"a run that ended", runfiles.StartResume, &runfiles.RunState{RunID: "r1", Terminated: &runfiles.Termination{Reason: runfiles.ReasonCompleted}}, []string{"RALPH_WORKSPACE=", "RALPH_RUN_ID=r1"}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := &warnRecorder{}
			e := newTestEngine(t, dir, happy(), settings(), func(o *Options) {
				o.Reporter, o.Start, o.KillGrace, o.Objective = w, tc.start, time.Second, "x"
			})
			require.NoError(t, os.MkdirAll(e.dir, 0o755))
			var env []string
			for _, kv := range tc.env {
				if kv == "RALPH_WORKSPACE=" {
					kv += dir
				}
				env = append(env, kv)
			}
			pgid, exited := startGroup(t, env...)
			record := strconv.Itoa(pgid) + "\n" + tc.recorded + "\n"
			require.NoError(t, os.WriteFile(filepath.Join(e.dir, runfiles.AgentPIDFile), []byte(record), 0o644))

			require.NoError(t, e.stopOrphanedAgent(tc.prev))
			assert.True(t, groupAlive(pgid), "the group is still running")
			select {
			case err := <-exited:
				t.Fatalf("the process was stopped: %v", err)
			default:
			}
			if tc.warns == "" {
				assert.Empty(t, w.warnings)
				return
			}
			_, startErr := processStart(pgid)
			if (tc.recorded != "" && startErr != nil) || (tc.recorded == "" && runtime.GOOS != "linux") {
				tc.warns = "cannot tell on this system" // neither its start time nor its environment shows it
			}
			require.Len(t, w.warnings, 1)
			assert.Contains(t, w.warnings[0], tc.warns)
			assert.Contains(t, w.warnings[0], "process group "+strconv.Itoa(pgid))
		})
	}
}

// The agent's start time, recorded as it started, shows the group to be
// the agent ralph started even where no environment can be read (macOS),
// and whatever its environment holds.
func TestTheAgentRecordedWithItsStartTimeIsStopped(t *testing.T) {
	dir := t.TempDir()
	pgid, exited := startGroup(t)
	if _, err := processStart(pgid); err != nil {
		t.Skipf("no start time of a process on %s: %v", runtime.GOOS, err)
	}
	w := &warnRecorder{}
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Reporter = w; o.KillGrace = 10 * time.Minute; o.Start = runfiles.StartResume })
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	e.recordAgent(pgid)

	require.NoError(t, e.stopOrphanedAgent(cutOff("r1")))
	require.Len(t, w.warnings, 1)
	require.Contains(t, w.warnings[0], "stopping agent process group "+strconv.Itoa(pgid))
	var exit *exec.ExitError
	require.ErrorAs(t, <-exited, &exit)
	status, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.Equal(t, syscall.SIGTERM, status.Signal())
}

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job that left the group and its session (setsid) is out of reach of a
// signal to the group, but carries the group's mark: EnsureGone stops it
// too, whether it stops on SIGTERM or only on SIGKILL, and reaps it.
func TestEnsureGoneStopsWhatLeftTheGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		script  string
		minTime time.Duration
	}{
		{"setsid job", "setsid sh -c 'echo $$; exec sleep 30 >/dev/null' &", 0},
		{"setsid job that ignores SIGTERM", "setsid sh -c 'trap \"\" TERM; echo $$; while :; do sleep 1; done' </dev/null 2>/dev/null &", testGrace},
		{"daemon whose parent is gone", "setsid sh -c 'sleep 30 >/dev/null 2>&1 & echo $!' &", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, job := startWithJob(t, tc.script, testGrace)
			t.Cleanup(func() { _ = syscall.Kill(job, syscall.SIGKILL) })
			pgid, err := syscall.Getpgid(job)
			require.NoError(t, err)
			require.NotEqual(t, g.pgid, pgid, "the job left the group")
			_, err = g.Wait(t.Context())
			require.NoError(t, err)

			start := time.Now()
			require.NoError(t, g.EnsureGone(nil))
			assertTook(t, start, tc.minTime)
			assertGone(t, job, "the job that left the group")
		})
	}
}

// Stopping a group while its leader runs stops what left it as well, before
// EnsureGone looks.
func TestStopReachesWhatLeftTheGroup(t *testing.T) {
	t.Parallel()
	g, job := startWithJob(t, "setsid sh -c 'echo $$; exec sleep 30 >/dev/null' & exec sleep 30 >/dev/null", testGrace)
	t.Cleanup(func() { _ = syscall.Kill(job, syscall.SIGKILL) })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stopped, _ := g.Wait(ctx)
	assert.True(t, stopped)
	// Dead, or a zombie (whose environment is gone) until EnsureGone reaps it.
	assert.Eventually(t, func() bool { return !marked(job, g.Mark()) }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, g.EnsureGone(nil))
	assertGone(t, job, "the job that left the group")
}

// A process that carries another group's mark, or none, is left alone.
func TestEnsureGoneLeavesOtherProcesses(t *testing.T) {
	t.Parallel()
	other := exec.Command("sleep", "30")
	NewMark().tag(other)
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })

	g, job := startWithJob(t, "setsid sh -c 'echo $$; exec sleep 30 >/dev/null' &", testGrace)
	_, err := g.Wait(t.Context())
	require.NoError(t, err)
	require.NoError(t, g.EnsureGone(nil))
	assertGone(t, job, "the group's job")
	require.NoError(t, syscall.Kill(other.Process.Pid, 0), "another group's process lives on")
}

// StopMarked stops what a group left behind after the process that started
// it died: here, processes started with the mark as if by a ralph that is
// gone. A mark that is not one NewMark makes stops nothing.
func TestStopMarked(t *testing.T) {
	t.Parallel()
	m := NewMark()
	var pids []int
	for range 2 {
		cmd := exec.Command("sh", "-c", "trap '' TERM; exec sleep 30") // SIGTERM stays ignored
		cmd.Env = append(os.Environ(), MarkEnv+"=0123456789abcdef01234567 "+string(m))
		require.NoError(t, cmd.Start())
		pids = append(pids, cmd.Process.Pid)
		go func() { _ = cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill() })
	}
	waitMarked(t, m, 2)

	for _, bad := range []Mark{"", "0123", Mark(strings.Repeat("z", 24))} {
		n, err := StopMarked(bad, 0)
		require.NoError(t, err)
		assert.Zero(t, n, "mark %q", bad)
	}
	n, err := StopMarked(m, testGrace)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return !marked(pid, m) }, 10*time.Second, 10*time.Millisecond, "process %d", pid)
	}
}

// Start adds the group's mark to the marks its command inherits.
func TestStartAddsItsMark(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sh", "-c", `echo "$`+MarkEnv+`"`)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), MarkEnv + "=parent"}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	g, err := Start(cmd, testGrace)
	require.NoError(t, err)
	line := make([]byte, 100)
	n, _ := out.Read(line)
	_, err = g.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "parent "+string(g.Mark())+"\n", string(line[:n]))
}

// waitMarked waits until n processes carry m (their exec is done).
func waitMarked(t *testing.T, m Mark, n int) {
	t.Helper()
	s := &strays{mark: m}
	require.Eventually(t, func() bool { return len(s.scan()) == n }, 10*time.Second, 5*time.Millisecond)
}

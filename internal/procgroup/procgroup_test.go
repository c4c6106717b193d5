//go:build unix

package procgroup

// Tests of the group mechanics with /bin/sh as the leader. Each script
// prints a line once its traps and background jobs are in place, so the
// test knows when to act; backends and criteria test the same behaviour
// end to end through their own runners.

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testGrace is the grace between SIGTERM and SIGKILL in these tests.
const testGrace = 300 * time.Millisecond

// startShell starts script with sh -c in its own group and returns the
// group and the first line the script prints on stdout.
func startShell(t *testing.T, script string, grace time.Duration) (g *Group, firstLine string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout = w
	g, err = Start(cmd, grace)
	_ = w.Close()
	require.NoError(t, err)
	t.Cleanup(func() {
		// A failed test must not leave its processes behind.
		g.signal(syscall.SIGKILL)
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err, "the script printed no line")
	return g, strings.TrimSpace(line)
}

// startWithJob is startShell for a script whose first line is the pid of
// a background job it leaves.
func startWithJob(t *testing.T, script string, grace time.Duration) (g *Group, job int) {
	t.Helper()
	g, line := startShell(t, script, grace)
	job, err := strconv.Atoi(line)
	require.NoError(t, err, "the script printed %q, not a pid", line)
	return g, job
}

// slack bounds how much longer than its grace stopping a group may take.
// It only has to tell "stopped" from "ran on": the scripts' jobs sleep 30s
// and the long graces are an hour, while a machine under load can delay a
// signal or a reap by seconds.
const slack = 20 * time.Second

// assertTook checks that what began at start took at least least, and
// not much longer.
func assertTook(t *testing.T, start time.Time, least time.Duration) {
	t.Helper()
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, least)
	assert.Less(t, took, least+slack)
}

// assertGone checks that pid (a process, or -pgid for a group) no longer
// exists, zombies included.
func assertGone(t *testing.T, pid int, what string) {
	t.Helper()
	err := syscall.Kill(pid, 0)
	assert.True(t, errors.Is(err, syscall.ESRCH), "%s (%d) still exists: kill(0) = %v", what, pid, err)
}

func TestStartLeadsANewGroup(t *testing.T) {
	t.Parallel()
	g, _ := startShell(t, "echo ready; exec sleep 30", testGrace)
	pgid, err := syscall.Getpgid(g.cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, g.cmd.Process.Pid, pgid, "the command leads its group")
	assert.Equal(t, g.pgid, pgid)
	assert.NotEqual(t, syscall.Getpgrp(), pgid, "not the test's own group")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stopped, _ := g.Wait(ctx)
	assert.True(t, stopped)
	require.NoError(t, g.EnsureGone(nil))
	assertGone(t, -g.pgid, "the group")
}

func TestStartKeepsOtherProcAttrs(t *testing.T) {
	t.Parallel()
	attr := &syscall.SysProcAttr{Pgid: 1}
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = attr
	g, err := Start(cmd, testGrace)
	require.NoError(t, err)
	assert.Same(t, attr, cmd.SysProcAttr)
	assert.True(t, attr.Setpgid)
	assert.Zero(t, attr.Pgid, "a group of its own, not group 1")
	_, err = g.Wait(t.Context())
	require.NoError(t, err)
	require.NoError(t, g.EnsureGone(nil))
}

func TestStartError(t *testing.T) {
	t.Parallel()
	g, err := Start(exec.Command("/nonexistent/ralph-agent"), testGrace)
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Nil(t, g)
}

func TestWaitReportsTheExit(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	g, err := Start(cmd, testGrace)
	require.NoError(t, err)
	stopped, err := g.Wait(t.Context())
	assert.False(t, stopped)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())

	require.NoError(t, g.EnsureGone(nil))
	assert.True(t, g.termAt.IsZero(), "nothing was left, so nothing was signalled")
}

// The scripts leave a background job and wait in the foreground, so both
// the shell and its job must die.
func TestWaitStopsTheGroupWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		script  string
		signal  syscall.Signal // what ended the leader
		minTime time.Duration
	}{
		{"SIGTERM suffices", "sleep 30 & echo $!; wait", syscall.SIGTERM, 0},
		// Ignored signals are inherited, so the job ignores SIGTERM too.
		{"SIGTERM ignored, SIGKILL follows", "trap '' TERM; sleep 30 & echo $!; wait", syscall.SIGKILL, testGrace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, job := startWithJob(t, tc.script, testGrace)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			start := time.Now()
			stopped, err := g.Wait(ctx)
			assert.True(t, stopped)
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			ws := ee.Sys().(syscall.WaitStatus)
			assert.Equal(t, tc.signal, ws.Signal())
			require.NoError(t, g.EnsureGone(nil))
			assertTook(t, start, tc.minTime)
			assertGone(t, -g.pgid, "the group")
			assertGone(t, job, "the background job")
		})
	}
}

// The leader exits by itself and leaves a job behind. Once the leader is
// waited for, the job is an orphan: the subreaper makes it the test's
// child, and ESRCH (rather than a zombie) shows that it was reaped.
func TestEnsureGoneStopsWhatTheLeaderLeftBehind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		script  string
		minTime time.Duration
	}{
		{"job that stops on SIGTERM", "sleep 30 >/dev/null 2>&1 & echo $!", 0},
		{"job holding the output", "sleep 30 & echo $!", 0},
		{"job that ignores SIGTERM", "(trap '' TERM; sh -c 'echo $$; exec sleep 30') &", testGrace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, job := startWithJob(t, tc.script, testGrace)
			stopped, err := g.Wait(t.Context())
			require.NoError(t, err)
			assert.False(t, stopped)

			start := time.Now()
			require.NoError(t, g.EnsureGone(nil))
			assertTook(t, start, tc.minTime)
			assertGone(t, -g.pgid, "the group")
			assertGone(t, job, "the background job")
		})
	}
}

func TestStopForceSkipsTheGrace(t *testing.T) {
	t.Parallel()
	g, _ := startShell(t, "trap '' TERM; echo ready; while :; do sleep 0.05; done", time.Hour)
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = g.cmd.Wait()
		close(done)
	}()
	force := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(force) })

	start := time.Now()
	g.Stop(done, force)
	<-done
	require.NoError(t, g.EnsureGone(force))
	assert.Less(t, time.Since(start), slack, "force must not wait out an hour's grace")
	var ee *exec.ExitError
	require.ErrorAs(t, waitErr, &ee)
	assert.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	assertGone(t, -g.pgid, "the group")
}

func TestStopReturnsWhenTheLeaderExits(t *testing.T) {
	t.Parallel()
	g, _ := startShell(t, "echo ready; exec sleep 30", time.Hour)
	done := make(chan struct{})
	go func() {
		_ = g.cmd.Wait()
		close(done)
	}()
	start := time.Now()
	g.Stop(done, nil)
	assert.Less(t, time.Since(start), slack)
	_, killedAt := g.deadlines()
	assert.True(t, killedAt.IsZero(), "SIGTERM sufficed")
	require.NoError(t, g.EnsureGone(nil))
}

func TestEnsureGoneForceSkipsTheGrace(t *testing.T) {
	t.Parallel()
	g, job := startWithJob(t, "(trap '' TERM; sh -c 'echo $$; exec sleep 30') &", time.Hour)
	_, err := g.Wait(t.Context())
	require.NoError(t, err)

	force := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(force) })
	start := time.Now()
	require.NoError(t, g.EnsureGone(force))
	assert.Less(t, time.Since(start), slack, "force must not wait out an hour's grace")
	assertGone(t, job, "the background job")
}

// SIGTERM goes out once: a leader stopped by Stop whose job outlives it
// gets its SIGKILL when the grace since that first SIGTERM runs out, not a
// new grace from EnsureGone.
func TestEnsureGoneKeepsTheGraceOfTheFirstSIGTERM(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	// The leader stops at once on SIGTERM; the job ignores it, and says
	// so once it does.
	g, _ := startShell(t, "(trap '' TERM; echo ready; exec sleep 30) & wait", grace)
	ctx, cancel := context.WithCancel(t.Context())
	start := time.Now()
	cancel()
	stopped, _ := g.Wait(ctx)
	require.True(t, stopped)
	firstTerm := g.termAt
	require.False(t, firstTerm.IsZero())
	require.NoError(t, g.EnsureGone(nil))
	assert.Equal(t, firstTerm, g.termAt, "EnsureGone sent no second SIGTERM, so started no new grace")
	assert.Less(t, g.killedAt.Sub(firstTerm), grace+slack, "SIGKILL came when the first grace ran out")
	assertTook(t, start, grace)
}

package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ralph-loop/ralph/runfiles"
)

func TestParseStat(t *testing.T) {
	st, ok := parseStat([]byte("4242 (a (b) c) Z 1 4240 4240 0 -1 4194560 106 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10"))
	require.True(t, ok)
	assert.Equal(t, procStat{state: "Z", pgrp: 4240, start: "987654"}, st,
		"a command name with spaces and parentheses does not shift the fields")
	_, ok = parseStat([]byte("4242 (truncated"))
	assert.False(t, ok)
	_, ok = parseStat([]byte("4242 (short) S 1 4240"))
	assert.False(t, ok)
}

// exitedLeader starts `sh -c script` leading a process group of its own,
// with env added to its environment, and waits for the shell to exit
// without reaping it: its group is left with a zombie leader and whatever
// the script left running, as an agent that died with a killed ralph
// leaves its group where nothing reaps it.
func exitedLeader(t *testing.T, script string, env ...string) int {
	t.Helper()
	p := exec.Command("sh", "-c", script)
	p.Env = append(os.Environ(), env...)
	p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, p.Start())
	pgid := p.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = p.Wait()
	})
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil))
	return pgid
}

func TestAGroupOfZombiesIsNotRunning(t *testing.T) {
	pgid := exitedLeader(t, "exit 0")
	require.True(t, groupAlive(pgid), "a signal still reaches the group")
	assert.False(t, groupRunning(pgid), "but nothing in it runs")

	dir := t.TempDir()
	w := &warnRecorder{}
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Reporter = w; o.Start = runfiles.StartResume })
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, runfiles.AgentPIDFile), []byte(strconv.Itoa(pgid)+"\n"), 0o600))
	require.NoError(t, e.stopOrphanedAgent(cutOff("r1")))
	assert.Empty(t, w.warnings, "nothing is left running to stop or to warn of")
}

// On Linux the agent dies with ralph and its children live on: they are
// what the resume stops, found by their environment, and it waits for
// them, not for the leader no one reaps.
func TestTheChildrenOfAnAgentThatDiedWithRalphAreStopped(t *testing.T) {
	dir := t.TempDir()
	pgid := exitedLeader(t, "sleep 600 & exit 0", "RALPH_WORKSPACE="+dir, "RALPH_RUN_ID=r1")
	require.True(t, groupRunning(pgid), "the child runs on")
	w := &warnRecorder{}
	// A grace period longer than any test: the stop must end when the
	// child is gone, not when the grace period is over.
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Reporter = w; o.Start = runfiles.StartResume; o.KillGrace = time.Hour })
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, runfiles.AgentPIDFile), []byte(strconv.Itoa(pgid)+"\n\n"), 0o600))

	require.NoError(t, e.stopOrphanedAgent(cutOff("r1")))
	require.Len(t, w.warnings, 1)
	assert.Contains(t, w.warnings[0], "stopping agent process group "+strconv.Itoa(pgid))
	assert.False(t, groupRunning(pgid))
}

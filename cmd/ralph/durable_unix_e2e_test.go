//go:build unix

package main

// A lock inherited by a forked child, which only Unix has.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
)

// A ralph killed outright can leave its lock held for a moment by a child
// it forked just before it died: the child keeps a copy of the lock's
// descriptor until it execs, which on a loaded machine takes a while. The
// next ralph must wait for it, say what it waits for, and go on, never
// report the dead ralph as running. The test holds the lock itself, as
// that child would.
func TestResumeWaitsForALockHeldPastItsHoldersDeath(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(slowScript(0))
	killed := w.ralphKilledAt(engine.FaultAgentStarted+":1", false)
	require.True(t, killed.killed, "ralph exited %d: %s", killed.code, killed.stderr)
	lockPath := filepath.Join(w.dir, ".ralph", "loop.lock")
	dead, err := runfiles.ReadLockInfo(lockPath)
	require.NoError(t, err)

	inherited, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	require.NoError(t, err)
	defer inherited.Close()
	require.NoError(t, syscall.Flock(int(inherited.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))

	cmd := exec.Command(ralphBin, "loop", "--resume")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var said []string
	for lines.Scan() && !strings.Contains(lines.Text(), "waiting up to") {
		said = append(said, lines.Text())
	}
	require.Contains(t, lines.Text(), "waiting up to", "ralph said: %s", strings.Join(said, "\n"))
	assert.Contains(t, lines.Text(), fmt.Sprintf("pid %d, which is no longer running", dead.PID))
	assert.Contains(t, lines.Text(), fmt.Sprintf("pid %d (", os.Getpid()), "it names the process that really holds the lock")

	require.NoError(t, inherited.Close())
	rest, err := io.ReadAll(stderr)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "%s", rest)
	assert.Contains(t, string(rest), fmt.Sprintf("took over the lock left by pid %d", dead.PID))
	assert.NotContains(t, string(rest), "another ralph is running")
	assert.Equal(t, "terminate completed", last(w.flow()))
}

//go:build unix

package main

// The .ralph directory tests that signal process groups.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agent.pgid can come with a repository too, naming any process group of
// the user's: ralph stops a group only when it is the agent of the run
// being resumed, in this workspace.
func TestE2EPlantedAgentPgidLeavesTheProcessAlive(t *testing.T) {
	t.Parallel()
	victim := exec.Command("sleep", "600")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, victim.Start())
	ended := make(chan struct{})
	go func() { _ = victim.Wait(); close(ended) }()
	t.Cleanup(func() { _ = syscall.Kill(-victim.Process.Pid, syscall.SIGKILL); <-ended })
	pgid := strconv.Itoa(victim.Process.Pid)
	alive := func() bool {
		select {
		case <-ended:
			return false
		default:
			return syscall.Kill(-victim.Process.Pid, 0) == nil
		}
	}

	w := cloneWith(t, linkConfig, map[string]string{".ralph/agent.pgid": pgid + "\n"}, nil)
	w.script(doneScript())
	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, alive(), "a plain loop in a fresh clone leaves the group alone")

	unfinishedRun(t, w)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, ".ralph", "agent.pgid"), []byte(pgid+"\n"), 0o600))
	r = w.ralph("loop", "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, alive(), "a resume leaves a group that is not its run's agent alone")
	if runtime.GOOS == "linux" {
		assert.Contains(t, r.stderr, "agent.pgid names process group "+pgid+", but no process in it is an agent of run")
	} else {
		assert.Contains(t, r.stderr, "cannot tell on this system whether it is the agent")
	}
}

// The agent a killed ralph left running is still stopped by the resume:
// the agent dies with ralph, but a process it started lives on in its
// group.
func TestE2EResumeStopsTheAgentAKilledRalphLeft(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux shows whose agent a process is")
	}
	w := newWorkspace(t)
	w.write("ralph.yml", linkConfig+agentCLI())
	w.script(agentScript{Steps: []step{{WhenFile: map[string]string{"resumed": "yes"}, Say: tag("LOOP_COMPLETE", "done"),
		Else: &step{SpawnChild: true, SleepMS: 120_000}}}})
	loop, _ := w.startRalph("loop")
	childFile := filepath.Join(w.state, "child.pid")
	waitFor(t, "the agent's child", func() bool { return w.pidFile(childFile) > 0 })
	pgid := w.pidFile(filepath.Join(w.dir, ".ralph", "agent.pgid"))
	require.NoError(t, loop.Process.Kill())
	_ = loop.Wait()
	child := w.pidFile(childFile)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	require.False(t, processGone(child), "the agent's child outlives the killed ralph")

	w.write("resumed", "yes\n")
	r := w.ralph("loop", "--resume")

	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "stopping agent process group "+strconv.Itoa(pgid))
	waitFor(t, "the agent's child to be gone", func() bool { return processGone(child) })
}

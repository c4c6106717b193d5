//go:build windows

package main

// Processes in the tests on Windows, which has no process groups to
// signal: ralph runs each agent in a job object that dies with ralph, so
// killing a process is all a test needs to do. The Unix versions are in
// proc_unix_test.go.

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

func processGone(pid int) bool {
	return !runfiles.ProcessAlive(pid)
}

// killGroup waits until the agent that agent.pgid names is gone, which
// its job object saw to when ralph died.
func killGroup(t *testing.T, w *workspace) {
	t.Helper()
	pid := w.pidFile(filepath.Join(w.dir, ".ralph", "agent.pgid"))
	require.Positive(t, pid, "agent.pgid names the agent")
	killProcess(pid)
	waitFor(t, "the agent to be gone", func() bool { return processGone(pid) })
}

// killProcess kills pid outright, as a crash of its machine would.
func killProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// killProcessGroup kills the process pgid; what it started is in ralph's
// job object, not a group of its own.
func killProcessGroup(pgid int) {
	killProcess(pgid)
}

// inOwnGroup starts cmd in a console process group of its own, so the
// test's Ctrl-C does not reach it; cancelling cmd's context kills it.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// childPeakRSS skips: Windows reports no peak memory for a child.
func childPeakRSS(t testing.TB, _ *os.ProcessState) int64 {
	t.Skip("Windows reports no peak memory for a child process")
	return 0
}

// selfCPU is the CPU this process has used so far: Windows has no
// getrusage, and the cluster's scale benchmark, its only user, runs on
// Linux.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	b.Skip("the CPU of the benchmark's own process is measured on Unix only")
	return 0
}

//go:build unix

package main

// Processes and their groups in the tests, through Unix signals; the
// Windows versions are in proc_windows_test.go.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// killGroup kills the agent's process group that agent.pgid names, and
// waits until it is gone.
func killGroup(t *testing.T, w *workspace) {
	t.Helper()
	pgid := w.pidFile(filepath.Join(w.dir, ".ralph", "agent.pgid"))
	require.Positive(t, pgid, "agent.pgid names the agent's group")
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitFor(t, "the agent's group to be gone", func() bool { return processGone(-pgid) })
}

// killProcess kills pid outright, as a crash of its machine would.
func killProcess(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// killProcessGroup kills every process in the group pgid.
func killProcessGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// inOwnGroup starts cmd in a process group of its own, which cancelling
// cmd's context kills whole: what a hung ralph started goes with it.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// childPeakRSS is the peak resident memory, in bytes, wait4 reported for
// a child that has ended.
func childPeakRSS(_ testing.TB, ps *os.ProcessState) int64 {
	return ps.SysUsage().(*syscall.Rusage).Maxrss * 1024 // kilobytes on Linux
}

// selfCPU is the CPU this process has used so far.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

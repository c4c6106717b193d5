//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the step's loop in a process group of its own, so that
// a terminal's Ctrl-C reaches the chain alone, which interrupts the step
// once: a second interrupt would have the loop kill its agent at once.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func signalOf(ps *os.ProcessState) (int, bool) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return int(ws.Signal()), true
}

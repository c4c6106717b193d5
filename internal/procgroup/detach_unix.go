//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Detach makes cmd, not yet started, the leader of a process group of its
// own without anything else of this package: a short command ralph waits
// for (git, a tracker's tool) that the terminal's Ctrl-C, which is meant
// for ralph, must not kill half-way. ralph stops it through its context.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// diedOfTerminalSignal reports whether err is a command's death by a
// signal a terminal sends its foreground group (Ctrl-C, Ctrl-\, a hang-up).
func diedOfTerminalSignal(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	sig := ws.Signal()
	return sig == syscall.SIGINT || sig == syscall.SIGQUIT || sig == syscall.SIGHUP
}

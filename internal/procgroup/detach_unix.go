//go:build unix

package procgroup

import (
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

package procgroup

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// Detach makes cmd, not yet started, the root of a console process group
// of its own: Windows does not deliver the terminal's Ctrl-C, which is
// meant for ralph, to such a group (CREATE_NEW_PROCESS_GROUP disables it
// in the new process and what it starts). ralph stops it through its
// context.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// diedOfTerminalSignal is false: the group is made at creation, so no
// Ctrl-C reaches a command before it leaves ralph's group.
func diedOfTerminalSignal(error) bool { return false }

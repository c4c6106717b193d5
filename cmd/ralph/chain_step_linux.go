package main

import (
	"os/exec"
	"syscall"
)

// interruptWithParent has the kernel send the step's loop SIGTERM when the
// chain dies, however it dies: the loop stops its agent and checkpoints,
// and the chain's resume resumes it. The signal is tied to the thread
// that started the loop, which the Go runtime keeps while the process
// lives (ralph locks no thread to a goroutine that exits).
func interruptWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}

//go:build unix

package testhook

import (
	"os"
	"syscall"
)

// die kills ralph at once, as a crash or SIGKILL would.
func die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not deliverable late; wait for it
}

const canInterruptSelf = true

// interruptSelf sends ralph SIGINT, as a Ctrl-C would.
func interruptSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGINT) }

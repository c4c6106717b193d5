//go:build !unix

package testhook

import "os"

// die kills ralph at once (TerminateProcess on Windows), as a crash would.
func die() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	select {} // the kill ends this process; wait for it
}

// canInterruptSelf is false: a process cannot send itself a Ctrl-C
// without sending it to every process on its console.
const canInterruptSelf = false

func interruptSelf() {}

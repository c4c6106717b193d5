//go:build !linux

package main

import "os/exec"

// interruptWithParent does nothing where the kernel cannot tie a child's
// end to its parent's: a step's loop outlives a chain killed outright,
// and the chain's resume waits for it (--wait) before resuming it.
func interruptWithParent(*exec.Cmd) {}

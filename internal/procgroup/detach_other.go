//go:build !unix && !windows

package procgroup

import "os/exec"

// Detach does nothing where there are no process groups to leave.
func Detach(*exec.Cmd) {}

func diedOfTerminalSignal(error) bool { return false }

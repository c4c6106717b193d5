//go:build unix

package procgroup

import "syscall"

// Interrupt asks process pid, a ralph this one started (or an earlier one
// did) as the leader of a group of its own, to stop as its user would:
// SIGTERM, which ralph takes as its first interrupt.
func Interrupt(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

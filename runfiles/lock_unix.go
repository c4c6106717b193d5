//go:build unix

package runfiles

import (
	"errors"
	"syscall"
)

// lockInfoAt is where the holder information starts in the lock file:
// at its start, since flock(2) locks a file without keeping anyone from
// reading or writing it.
const lockInfoAt = 0

// ProcessAlive reports whether pid names a running process (kill(pid, 0)).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

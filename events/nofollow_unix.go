//go:build unix

package events

import (
	"os"
	"syscall"
)

// openAppend opens the log at path to append to it, creating it 0600;
// a link there is refused (O_NOFOLLOW).
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
}

//go:build !unix

package events

import (
	"fmt"
	"io/fs"
	"os"
)

// openAppend opens the log at path to append to it, creating it 0600; a
// link there is refused, looked for first where open has no flag to
// refuse one.
func openAppend(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: %w", path, fs.ErrInvalid)
	}
	return os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
}

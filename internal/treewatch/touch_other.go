//go:build !unix

package treewatch

import (
	"fmt"
	"io/fs"
	"os"
	"time"
)

// createBarrier makes the barrier at path, or opens it, never through a
// link: looked for first, where open has no flag to refuse one.
func createBarrier(path string) (*os.File, error) {
	if err := notLink(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
}

// touch sets path's times to now, unless it is a link.
func touch(path string, now time.Time) error {
	if err := notLink(path); err != nil {
		return err
	}
	return os.Chtimes(path, now, now)
}

func notLink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: %w", path, fs.ErrInvalid)
	}
	return nil
}

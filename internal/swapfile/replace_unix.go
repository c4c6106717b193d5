//go:build !windows

package swapfile

import (
	"path/filepath"

	"github.com/google/renameio/v2"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// replace is write-then-rename (renameio, which also flushes). The rename
// replaces a link at path rather than follow it.
func replace(path string, data []byte, beforeSwap func()) error {
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(ralphdir.FileMode))
	if err != nil {
		return err
	}
	defer func() { _ = t.Cleanup() }()
	if _, err := t.Write(data); err != nil {
		return err
	}
	if beforeSwap != nil {
		beforeSwap()
	}
	return t.CloseAtomicallyReplace()
}

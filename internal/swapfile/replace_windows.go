package swapfile

import (
	"errors"
	"os"
	"path/filepath"
)

// replace is write-then-rename, where renameio does not build: a
// temporary file beside path, flushed, then renamed over it (MoveFileEx,
// which replaces the file).
func replace(path string, data []byte, beforeSwap func()) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return err
	}
	if beforeSwap != nil {
		beforeSwap()
	}
	return os.Rename(f.Name(), path)
}

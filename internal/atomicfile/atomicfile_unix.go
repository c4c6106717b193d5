//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// write is renameio's write-then-rename, with the temporary file beside
// path: a shared temporary directory could let others read it.
func write(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func()) error {
	opts := []renameio.Option{renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm)}
	if keepMode {
		opts = append(opts, renameio.WithExistingPermissions())
	}
	t, err := renameio.NewPendingFile(path, opts...)
	if err != nil {
		return err
	}
	defer func() { _ = t.Cleanup() }()
	if _, err := t.Write(data); err != nil {
		return err
	}
	if beforeRename != nil {
		beforeRename()
	}
	return t.CloseAtomicallyReplace()
}

// renameFile is how a file written beside path replaces it.
func renameFile(from, to string) error { return os.Rename(from, to) }

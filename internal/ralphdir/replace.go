//go:build !windows

package ralphdir

import "github.com/google/renameio/v2"

// replaceFile is write-then-rename through renameio, which also flushes.
// The temporary file lives in dir, beside name: the rename must not cross
// file systems, and a shared temporary directory could let others read it.
func replaceFile(dir, name string, data []byte) error {
	return renameio.WriteFile(name, data, FileMode, renameio.WithTempDir(dir))
}

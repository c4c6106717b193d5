//go:build unix

package git

import (
	"os"
	"syscall"
)

// ownedBySelf reports whether ralph's user owns the file info describes.
func ownedBySelf(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

//go:build unix

package ralphdir

import (
	"io/fs"
	"os"
	"syscall"
)

// NoFollow is the open flag that refuses a link as the last part of a
// path (O_NOFOLLOW), for opens that cannot go through OpenFile (a lock
// library's).
const NoFollow = syscall.O_NOFOLLOW

func openNoFollow(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag|NoFollow, perm)
}

// ownerOf is the uid that owns a file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

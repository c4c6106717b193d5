//go:build !unix

package ralphdir

import (
	"io/fs"
	"os"
)

// NoFollow is 0 where open has no flag that refuses a link: openNoFollow
// looks first instead.
const NoFollow = 0

func openNoFollow(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, linkError(name)
	}
	return os.OpenFile(name, flag, perm)
}

// ownerOf says nothing where files have no uid.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

//go:build unix

package treewatch

import (
	"time"

	"golang.org/x/sys/unix"
)

const noFollow = unix.O_NOFOLLOW

// touch sets path's times to now without following a link: the barrier
// is in .ralph/, where a link is never ralph's.
func touch(path string, now time.Time) error {
	ts := unix.NsecToTimespec(now.UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

//go:build unix

package treewatch

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// createBarrier makes the barrier at path (0600), or opens it, never
// through a link: it is in .ralph/, where a link is never ralph's.
func createBarrier(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
}

// touch sets path's times to now without following a link.
func touch(path string, now time.Time) error {
	ts := unix.NsecToTimespec(now.UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

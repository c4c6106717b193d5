package runfiles

import (
	"errors"

	"golang.org/x/sys/windows"
)

// lockInfoAt is where the holder information starts in the lock file:
// after its first byte, which is what gofrs/flock locks (LockFileEx over
// one byte). Windows keeps a locked byte from being read or written
// through any other handle, the holder's own included, so the holder
// writes its information, and others read it, beside the byte.
const lockInfoAt = 1

// stillActive is what GetExitCodeProcess reports for a process that has
// not exited (STILL_ACTIVE). A process that exited with status 259 looks
// alive too; nothing tells the two apart.
const stillActive = 259

// ProcessAlive reports whether pid names a running process: one that
// can be opened and has no exit status yet, or one that exists but may
// not be opened (another user's).
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer func() { _ = windows.CloseHandle(h) }()
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

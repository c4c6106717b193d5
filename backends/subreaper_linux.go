package backends

import (
	"sync"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>; the
// syscall package does not name it, and golang.org/x/sys is not needed for
// one constant.
const prSetChildSubreaper = 36

var subreaperOnce sync.Once

// becomeSubreaper makes ralph the reaper of its orphaned descendants. When an
// agent exits, its children are reparented to the nearest subreaper instead
// of init; ralph can then reap them by process group (procGroup.reap), and
// kill(-pgid, 0) reports ESRCH once they are gone. Without it, an init that
// does not reap (common in containers) would leave them as zombies, and the
// group would look alive forever. It is process-wide and idempotent; a
// failure only costs that guarantee, so it is ignored.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

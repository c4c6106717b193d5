package procgroup

import (
	"sync"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>; the
// syscall package does not name it, and golang.org/x/sys is not needed for
// one constant.
const prSetChildSubreaper = 36

var (
	subreaperOnce sync.Once
	subreaper     bool // the prctl succeeded
)

// becomeSubreaper makes the calling process the reaper of its orphaned
// descendants. When a group's leader exits, the members it leaves behind
// are reparented to the nearest subreaper instead of to PID 1; Group.reap
// can then collect them, and kill(-pgid, 0) reports ESRCH once they are
// gone. Without it, a PID 1 that does not reap (common in containers)
// would leave them as zombies, and the group would look alive forever.
// The attribute belongs to the whole process and setting it is
// idempotent, so it is set once; a failure only costs that guarantee,
// which the result says.
func becomeSubreaper() bool {
	subreaperOnce.Do(func() {
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		subreaper = errno == 0
	})
	return subreaper
}

// dieWithParent asks the kernel to SIGKILL the leader when ralph dies. The
// signal is tied to the thread that forked the leader; the Go runtime
// ends threads only for goroutines that lock one and exit, which ralph's
// process starters do not do. The runtime also checks, in the child, that
// the parent is still alive once the signal is set, so a child forked an
// instant before ralph died kills itself instead of exec'ing.
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

package criteria

import "syscall"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>; the
// syscall package does not name it.
const prSetChildSubreaper = 36

// becomeSubreaper makes ralph the reaper of its orphaned descendants: when
// a check's shell exits, its background jobs are reparented to ralph rather
// than to init, so procGroup.reap can collect them and kill(-pgid, 0)
// reports ESRCH once they are gone. An init that does not reap (common in
// containers) would otherwise leave zombies that look alive. The call is
// idempotent and cheap, so it is made before every command instead of
// being guarded by package state; a failure only costs that guarantee.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

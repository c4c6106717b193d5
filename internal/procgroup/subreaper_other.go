//go:build !linux

package procgroup

import "syscall"

// becomeSubreaper does nothing where there is no child subreaper: orphaned
// group members are left to init to reap.
func becomeSubreaper() bool { return false }

// dieWithParent does nothing where there is no parent death signal.
func dieWithParent(*syscall.SysProcAttr) {}

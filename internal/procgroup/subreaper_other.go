//go:build !linux

package procgroup

// becomeSubreaper does nothing where there is no child subreaper: orphaned
// group members are left to init to reap.
func becomeSubreaper() {}

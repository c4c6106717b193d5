//go:build !linux

package criteria

// becomeSubreaper does nothing where there is no child subreaper: orphaned
// group members are left to init.
func becomeSubreaper() {}

//go:build !linux

package fileholders

import "errors"

// Find asks lsof, there being no /proc.
func Find(path string) ([]Process, error) {
	return findWithLsof(path)
}

// Locks needs /proc's fdinfo. lsof's lock column is not sure enough (it
// shows a lock against one of the descriptors that share it, and not
// every system reports flock locks) to tell a status reader that a lock
// is free, so elsewhere the caller tries the lock itself.
func Locks(pid int, path string) (bool, error) {
	return false, errors.ErrUnsupported
}

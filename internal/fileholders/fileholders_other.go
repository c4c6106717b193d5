//go:build !linux

package fileholders

import "errors"

// Find needs /proc; elsewhere it cannot tell.
func Find(path string) ([]Process, error) {
	return nil, errors.ErrUnsupported
}

// Locks needs /proc; elsewhere it cannot tell.
func Locks(pid int, path string) (bool, error) {
	return false, errors.ErrUnsupported
}

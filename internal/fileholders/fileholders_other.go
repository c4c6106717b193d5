//go:build !linux

package fileholders

import "errors"

// Find needs /proc; elsewhere it cannot tell.
func Find(path string) ([]Process, error) {
	return nil, errors.ErrUnsupported
}

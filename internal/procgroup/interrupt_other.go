//go:build !unix && !windows

package procgroup

import "errors"

// Interrupt cannot ask a process to stop where there are no signals.
func Interrupt(int) error { return errors.ErrUnsupported }

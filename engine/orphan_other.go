//go:build !linux

package engine

import "errors"

// groupEnvirons is unsupported where no /proc shows other processes'
// environments.
func groupEnvirons(int) ([][]string, error) { return nil, errors.ErrUnsupported }

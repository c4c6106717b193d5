//go:build !linux && !darwin

package engine

import "errors"

// groupEnvirons is unsupported where no /proc shows other processes'
// environments.
func groupEnvirons(int) ([][]string, error) { return nil, errors.ErrUnsupported }

// processStart is unsupported where ralph knows of no way to read it.
func processStart(int) (string, error) { return "", errors.ErrUnsupported }

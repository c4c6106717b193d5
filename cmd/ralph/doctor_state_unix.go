//go:build unix

package main

import (
	"errors"
	"syscall"
)

// groupAlive reports whether a process of group pgid runs (or cannot be
// signalled by this user, which is running too).
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

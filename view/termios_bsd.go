//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package view

import "golang.org/x/sys/unix"

// getTermios is the ioctl that reads a terminal's settings.
const getTermios = unix.TIOCGETA

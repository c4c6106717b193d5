//go:build unix

package events

import "syscall"

// noFollow refuses a link as the log itself.
const noFollow = syscall.O_NOFOLLOW

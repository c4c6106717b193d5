package swapfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b in one step.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// unsupported reports an exchange refused by the kernel (older than 3.15)
// or the file system.
func unsupported(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)
}

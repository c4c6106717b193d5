package swapfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b in one step: renamex_np with
// RENAME_SWAP, which APFS supports.
func exchange(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}

// unsupported reports an exchange the file system refused (HFS+, a network
// or FAT volume).
func unsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)
}

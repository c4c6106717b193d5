package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

func write(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func()) error {
	return writeRename(path, data, perm, keepMode, beforeRename, renameRetrying)
}

// renameRetrying is os.Rename, retried while Windows refuses it because
// another process has the file open; see the package documentation.
func renameRetrying(from, to string) error {
	return retry(func() error { return os.Rename(from, to) }, refusedForNow, renameBound)
}

// refusedForNow reports the errors Windows gives for a file another
// process holds open without sharing its deletion.
func refusedForNow(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// renameBound is how long a rename is retried. A reader holds the file
// only while it reads it whole; a virus scanner about as long.
const renameBound = 2 * time.Second

// renameFile is how a file written beside path replaces it.
func renameFile(from, to string) error { return renameRetrying(from, to) }

// Package atomicfile replaces a file's contents so that a reader, and a
// process killed at any instant, sees the old contents or the new ones,
// never a mix: the data goes to a temporary file in the same directory
// (a rename must not cross file systems), which is flushed to stable
// storage and then renamed over the file. The rename replaces a link at
// the path rather than follows it.
//
// On Unix this is renameio. renameio's pending file does not exist on
// Windows, so there the package does the same itself: os.Rename is
// MoveFileEx with MOVEFILE_REPLACE_EXISTING, which replaces a file
// atomically within an NTFS volume. Windows refuses to replace a file that
// another process has open without FILE_SHARE_DELETE (a reader of the
// file, an indexer or a virus scanner that opened it a moment ago), so
// there a refused rename is retried for a bounded time before it fails.
//
// The temporary file is named "." + the file's name + digits, as
// renameio names it, so readers that skip ralph's leftovers find them.
//
// The package is a leaf that imports nothing of ralph's.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile replaces the file at path with data, as os.WriteFile would
// but atomically. An existing regular file keeps its permissions; a new
// one gets perm (less the umask, on Unix).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, true, nil)
}

// WriteFileUnsynced is WriteFile without flushing the data to stable
// storage before the rename: a process killed at any instant still leaves
// the old contents or the new ones, but a machine that goes down may
// leave the file empty. It is for files written after every event that
// are rebuilt from a log that is synced (a checkpoint that says how far
// it folded the log), or are read by people, where a flush of each would
// cost more than everything else the writer does.
func WriteFileUnsynced(path string, data []byte, perm fs.FileMode) error {
	return writeRenameSync(path, data, perm, true, nil, renameFile, false)
}

// Replace replaces the file at path with data, which gets perm whatever
// the file had. beforeRename, when not nil, runs once the data is written
// and flushed and before it replaces the file (a crash-test hook).
func Replace(path string, data []byte, perm fs.FileMode, beforeRename func()) error {
	return write(path, data, perm, false, beforeRename)
}

// writeRename is write-then-rename without renameio, for where renameio
// does not build; rename is os.Rename, or one that retries what Windows
// refuses for a moment. perm is applied as it is: Windows has no umask,
// and its permissions are only the read-only attribute (a perm without
// 0200).
func writeRename(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func(), rename func(from, to string) error) error {
	return writeRenameSync(path, data, perm, keepMode, beforeRename, rename, true)
}

// writeRenameSync is writeRename, flushing the data before the rename
// only when sync is set.
func writeRenameSync(path string, data []byte, perm fs.FileMode, keepMode bool, beforeRename func(), rename func(from, to string) error,
	sync bool) error {
	if keepMode {
		fi, err := os.Lstat(path)
		switch {
		case err == nil && fi.Mode().IsRegular():
			perm = fi.Mode().Perm()
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // fails once renamed: nothing left to remove
	_, err = f.Write(data)
	if err == nil && perm != 0o600 { // CreateTemp makes it 0600
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	if beforeRename != nil {
		beforeRename()
	}
	return rename(f.Name(), path)
}

// IsTemp reports whether name (a file's name, without its directory) is
// that of a temporary file WriteFile or Replace makes: "." + a name + the
// random digits renameio and os.CreateTemp add. One left behind is a
// write a crash cut off. At least 6 digits are asked for, so that a file
// of the user's named like ".v2" is not taken for one; a random number
// that short comes up less than once in ten thousand writes.
func IsTemp(name string) bool {
	digits := len(name) - len(strings.TrimRight(name, "0123456789"))
	return strings.HasPrefix(name, ".") && digits >= 6 && len(name)-digits > 1
}

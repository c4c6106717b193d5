// Package swapfile replaces a small file's contents atomically without
// creating or deleting a file each time. The new contents go into a spare
// file beside it, which is then exchanged with the file in one rename
// (RENAME_EXCHANGE on Linux, RENAME_SWAP on macOS's APFS): a reader opening the file, and a process
// killed at any instant, see the old contents or the new, never a mix, and
// the spare keeps the old ones until the next write reuses it. Both are
// private to the user (0600), and a link in the spare's place is refused
// (see internal/ralphdir).
//
// The spare is not flushed to stable storage before the exchange: after a
// power failure the file may hold older contents or a torn write. That
// suits a cache its owner can rebuild, as ralph rebuilds its checkpoint
// from the event log (which it does flush), and saves a flush per write.
//
// Creating and deleting a file per write, as a write-then-rename does,
// is what a file system charges most for in a tight loop: on ext4 without
// a journal each new inode is searched for past every inode deleted in
// the last minute. Where the exchange is not available (Windows, the BSDs,
// file systems that refuse it: HFS+, FAT, most network mounts) Write falls
// back to write-then-rename, as atomic for a reader, one file created per
// write (internal/atomicfile).
//
// A reader that keeps the file open across two later writes may see the
// second one's bytes: the spare it then holds is rewritten. Readers read
// the file whole at once, and may retry a read that does not parse.
package swapfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/ralph-loop/ralph/internal/atomicfile"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// SpareName is the spare file's name for a file named name.
func SpareName(name string) string { return "." + name + ".spare" }

// noExchange is set once an exchange is refused as unsupported, so later
// writes go straight to write-then-rename.
var noExchange atomic.Bool

// Write replaces path's contents with data. beforeSwap, when not nil, runs
// once the new contents are written and before they replace the old (a
// crash-test hook).
func Write(path string, data []byte, beforeSwap func()) error {
	if noExchange.Load() {
		return atomicfile.Replace(path, data, ralphdir.FileMode, beforeSwap)
	}
	spare := filepath.Join(filepath.Dir(path), SpareName(filepath.Base(path)))
	if err := overwrite(spare, data); err != nil {
		return err
	}
	if beforeSwap != nil {
		beforeSwap()
	}
	err := exchange(spare, path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrNotExist):
		// No file to exchange with yet: the spare becomes it.
		return os.Rename(spare, path)
	case unsupported(err):
		noExchange.Store(true)
		_ = os.Remove(spare)
		return atomicfile.Replace(path, data, ralphdir.FileMode, nil)
	}
	return fmt.Errorf("swap %s into place: %w", filepath.Base(path), err)
}

// overwrite writes data over the file at path, creating it if needed. A
// link there is refused, never written through: the exchange would then
// put it in the file's place too.
func overwrite(path string, data []byte) error {
	return ralphdir.WriteFile(filepath.Dir(path), path, data)
}

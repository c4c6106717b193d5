package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/ralph-loop/ralph/internal/exitcode"
)

// StorageError means ralph could not write one of its files under .ralph/:
// the disk is full, read-only or failing. It ends the run as fatal. What
// was written before stays consistent (the log is append-only and the
// checkpoint is replaced atomically), so once the cause is fixed the run
// continues with `ralph loop --resume`.
type StorageError struct {
	// Op says what ralph was doing: "append to the event log", …
	Op   string
	Path string
	Err  error
}

// Storage operations, for StorageError.Op.
const (
	OpAppendLog  = "append to the event log"
	OpCheckpoint = "write the checkpoint"
	OpRawOutput  = "keep the agent's raw output in"
)

func (e *StorageError) Error() string {
	return fmt.Sprintf("cannot %s %s: %s", e.Op, e.Path, e.cause())
}

func (e *StorageError) Unwrap() error { return e.Err }

// cause is the system's own words for the error when it is an errno (the
// temporary file renameio used is no use to the reader), else the error.
func (e *StorageError) cause() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return errno.Error()
	}
	return e.Err.Error()
}

// ExitCode makes it a fatal error.
func (e *StorageError) ExitCode() int { return exitcode.Fatal }

// storageError wraps err when the file system refused a write; other
// errors (nil, an event that cannot be encoded, a StorageError already)
// are returned as they are.
func storageError(op, path string, err error) error {
	var (
		se    *StorageError
		pe    *fs.PathError
		errno syscall.Errno
	)
	if err == nil || errors.As(err, &se) || !(errors.As(err, &pe) || errors.As(err, &errno)) {
		return err
	}
	return &StorageError{Op: op, Path: path, Err: err}
}

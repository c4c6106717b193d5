package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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

// Hint says what to do about it, by cause.
func (e *StorageError) Hint() string {
	dir := ralphDirOf(e.Path)
	resume := "then continue the run with `ralph loop --resume`; nothing written before this is lost"
	var errno syscall.Errno
	errors.As(e.Err, &errno)
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		return fmt.Sprintf("free space on the file system that holds %s (see `df -h %s`), %s", dir, dir, resume)
	case syscall.EROFS:
		return fmt.Sprintf("the file system that holds %s is read-only; make it writable, %s", dir, resume)
	case syscall.EFBIG:
		return fmt.Sprintf("the file is larger than the file system or `ulimit -f` allows; raise the limit, %s", resume)
	case syscall.EIO:
		return fmt.Sprintf("the disk reported an I/O error; check it (dmesg, smartctl), %s", resume)
	}
	return "fix the cause, " + resume
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

// ralphDirOf is the .ralph directory path lies in, or path's directory.
func ralphDirOf(path string) string {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if filepath.Base(dir) == DirName {
			return dir
		}
	}
	return filepath.Dir(path)
}

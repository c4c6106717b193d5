package engine

import (
	"errors"
	"io/fs"
	"syscall"
)

// Storage operations, for StorageError.Op.
const (
	OpAppendLog  = "append to the event log"
	OpCheckpoint = "write the checkpoint"
	OpRawOutput  = "keep the agent's raw output in"
	OpPrompt     = "keep the agent's prompt in"
)

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

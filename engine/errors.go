package engine

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/plural"
)

// The errors the engine returns, in one place. Each carries the facts a
// caller needs (the lock's holders, the file and its errno, the run) and
// its exit status; what to tell the user to do is the caller's to choose
// (cmd/ralph/hints.go).

// AgentAuthError means the agent could not authenticate: retrying cannot
// help until a person logs in or sets a key, so the run ends as fatal.
type AgentAuthError struct {
	Backend string
	Message string
}

func (e *AgentAuthError) Error() string { return e.Message }

// ExitCode makes it fatal.
func (e *AgentAuthError) ExitCode() int { return exitcode.Fatal }

// NoRunError means --resume found nothing to resume.
type NoRunError struct{ Why string }

func (e *NoRunError) Error() string { return "no run to resume: " + e.Why }

// ExitCode makes it a fatal error.
func (e *NoRunError) ExitCode() int { return exitcode.Fatal }

// UnfinishedRunError means a plain `ralph loop` found a run that was cut off.
type UnfinishedRunError struct {
	RunID     string
	Iteration int
	Why       string
}

func (e *UnfinishedRunError) Error() string {
	return fmt.Sprintf("run %s is unfinished (%s after %s)", e.RunID, e.Why, plural.Count(e.Iteration, "iteration", "iterations"))
}

// ExitCode makes it a fatal error.
func (e *UnfinishedRunError) ExitCode() int { return exitcode.Fatal }

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

func (e *StorageError) Error() string {
	return fmt.Sprintf("cannot %s %s: %s", e.Op, e.Path, e.cause())
}

func (e *StorageError) Unwrap() error { return e.Err }

// cause is the system's own words for the error when it is an errno (the
// temporary file internal/atomicfile used is no use to the reader), else the error.
func (e *StorageError) cause() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return errno.Error()
	}
	return e.Err.Error()
}

// ExitCode makes it a fatal error.
func (e *StorageError) ExitCode() int { return exitcode.Fatal }

package engine

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/fileholders"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/plural"
)

// The errors the engine returns, in one place. Each carries the facts a
// caller needs (the lock's holders, the file and its errno, the run) and
// the kind of failure it is (hint.Kind, which ralph serve's statuses read);
// each ends a command with exit status 3 (hint.ExitCode). What to tell the
// user to do is the views' to choose (view.EngineHint).

// ErrNoState means there is no checkpoint: no run has started here.
var ErrNoState = errors.New("no run state")

// CorruptStateError means state.json exists but cannot be used.
type CorruptStateError struct {
	Path string
	Err  error
}

func (e *CorruptStateError) Error() string {
	return fmt.Sprintf("corrupt state %s: %v", e.Path, e.Err)
}

func (e *CorruptStateError) Unwrap() error { return e.Err }

// Kind: the checkpoint on disk is not one ralph can use as it is.
func (e *CorruptStateError) Kind() hint.Kind { return hint.Invalid }

// LogPathError means .ralph/current-events names an event log that is not
// a file in .ralph/: ralph reads and appends only to logs there.
type LogPathError struct {
	File string // current-events
	Log  string // the log it names
}

func (e *LogPathError) Error() string {
	return fmt.Sprintf("%s names the event log %q, which is not a file in %s/; ralph reads and appends only to event logs there",
		e.File, e.Log, DirName)
}

// Kind: the file that names the log is wrong, not the request.
func (e *LogPathError) Kind() hint.Kind { return hint.Invalid }

// AgentAuthError means the agent could not authenticate: retrying cannot
// help until a person logs in or sets a key, so the run ends as fatal.
type AgentAuthError struct {
	Backend string
	Message string
}

func (e *AgentAuthError) Error() string { return e.Message }

// Kind: the failure is the agent's provider's, outside the request.
func (e *AgentAuthError) Kind() hint.Kind { return hint.Other }

// LockHeldError means the workspace lock is held by another process.
type LockHeldError struct {
	Path string
	// Holder is what the lock file says about its holder.
	Holder LockInfo
	// HolderGone says the recorded holder is no longer running, so the
	// lock is held by some other process: Holders, when they could be
	// found.
	HolderGone bool
	Holders    []fileholders.Process
}

func (e *LockHeldError) Error() string {
	switch {
	case e.HolderGone && len(e.Holders) > 0:
		return fmt.Sprintf("the workspace lock %s is held by %s; the ralph it names, pid %d, is no longer running",
			e.Path, fileholders.Describe(e.Holders), e.Holder.PID)
	case e.HolderGone:
		return fmt.Sprintf("the workspace lock %s is held by another process; the ralph it names, pid %d, is no longer running",
			e.Path, e.Holder.PID)
	case e.Holder.PID == 0:
		return fmt.Sprintf("another ralph is running in this workspace (lock %s)", e.Path)
	}
	return fmt.Sprintf("another ralph is running in this workspace: pid %d on %s, run %s, started %s (lock %s)",
		e.Holder.PID, e.Holder.Host, e.Holder.RunID,
		e.Holder.StartedAt.Local().Format(time.DateTime), e.Path)
}

// Kind: another process holds the workspace now.
func (e *LockHeldError) Kind() hint.Kind { return hint.Conflict }

// NoRunError means --resume found nothing to resume.
type NoRunError struct{ Why string }

func (e *NoRunError) Error() string { return "no run to resume: " + e.Why }

// Kind: there is no run to resume.
func (e *NoRunError) Kind() hint.Kind { return hint.NotFound }

// UnfinishedRunError means a plain `ralph loop` found a run that was cut off.
type UnfinishedRunError struct {
	RunID     string
	Iteration int
	Why       string
}

func (e *UnfinishedRunError) Error() string {
	return fmt.Sprintf("run %s is unfinished (%s after %s)", e.RunID, e.Why, plural.Count(e.Iteration, "iteration", "iterations"))
}

// Kind: the run that is there refuses a fresh start until it is resumed
// or set aside.
func (e *UnfinishedRunError) Kind() hint.Kind { return hint.Conflict }

// ErrNoLog means a workspace has no event log yet: no run has started.
var ErrNoLog = hint.New(hint.NotFound, "no event log")

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

// Kind: the disk failed, not the request.
func (e *StorageError) Kind() hint.Kind { return hint.Other }

// UnknownRunError means no run of the workspace has the id asked for, nor
// an id it starts.
type UnknownRunError struct {
	ID  string
	Dir string // the workspace's .ralph directory
}

func (e *UnknownRunError) Error() string { return fmt.Sprintf("no run %q in %s", e.ID, e.Dir) }

// Kind: no run has that id.
func (e *UnknownRunError) Kind() hint.Kind { return hint.NotFound }

// AmbiguousRunError means a prefix of a run id that starts several runs'
// ids.
type AmbiguousRunError struct {
	ID      string
	Matches []string
}

func (e *AmbiguousRunError) Error() string {
	return fmt.Sprintf("%q names %d runs: %s", e.ID, len(e.Matches), strings.Join(e.Matches, ", "))
}

// Kind: the id asked for is too short to name one run.
func (e *AmbiguousRunError) Kind() hint.Kind { return hint.Invalid }

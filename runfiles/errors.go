package runfiles

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/fileholders"
	"github.com/ralph-loop/ralph/internal/hint"
)

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

// ErrNoLog means a workspace has no event log yet: no run has started.
var ErrNoLog = hint.New(hint.NotFound, "no event log")

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

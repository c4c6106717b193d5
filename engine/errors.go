package engine

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/plural"
)

// The errors the engine returns, in one place. Each carries the facts a
// caller needs (the lock's holders, the file and its errno, the run) and
// the kind of failure it is (hint.Kind, which ralph serve's statuses read);
// each ends a command with exit status 3 (hint.ExitCode). What to tell the
// user to do is the views' to choose (view.EngineHint).

// AgentAuthError means the agent could not authenticate: retrying cannot
// help until a person logs in or sets a key, so the run ends as fatal.
type AgentAuthError struct {
	Backend string
	Message string
}

func (e *AgentAuthError) Error() string { return e.Message }

// Kind: the failure is the agent's provider's, outside the request.
func (e *AgentAuthError) Kind() hint.Kind { return hint.Other }

// GitArmedError means a confined agent, or a check's command confined as
// it was, changed what decides which repository git finds in the
// workspace and what git runs there (git.Controls): ralph runs no git on
// a repository an agent may have armed, so the run ends as fatal.
type GitArmedError struct {
	// By is whose run it was: "the agent of hat builder".
	By string
	// Changed are the paths that changed, relative to the workspace when
	// inside it (.git/config).
	Changed []string
}

// changedShown bounds the paths GitArmedError names one by one.
const changedShown = 6

func (e *GitArmedError) Error() string {
	shown := e.Changed
	more := ""
	if len(shown) > changedShown {
		shown, more = shown[:changedShown], fmt.Sprintf(" and %d more", len(e.Changed)-changedShown)
	}
	return fmt.Sprintf("%s changed %s%s, which %s what git runs in this repository: "+
		"ralph runs no git on a repository an agent may have armed, and stopped the run",
		e.By, strings.Join(shown, ", "), more, plural.Word(len(e.Changed), "decides", "decide"))
}

// Kind: the workspace is in a state ralph refuses to work in.
func (e *GitArmedError) Kind() hint.Kind { return hint.Conflict }

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

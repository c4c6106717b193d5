package runfiles

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// StopMode is how a stop request (`ralph stop`, written into .ralph/stop)
// stops the loop.
type StopMode string

// Stop modes, as .ralph/stop holds them.
const (
	StopAtBoundary StopMode = "next" // stop before the next iteration
	StopNow        StopMode = "now"  // interrupt the running iteration
)

// ParseStopMode reads a stop mode as .ralph/stop holds it.
func ParseStopMode(s string) (StopMode, error) {
	switch m := StopMode(strings.TrimSpace(s)); m {
	case StopAtBoundary, StopNow:
		return m, nil
	}
	return "", fmt.Errorf("stop mode %q: want %q (before the next iteration) or %q (at once)", s, StopAtBoundary, StopNow)
}

// RequestStop asks the loop running in workspace to stop.
func RequestStop(workspace string, mode StopMode) error {
	return RequestStopIn(In(workspace), mode)
}

// RequestStopIn asks the loop whose files are in d (a chain step's
// directory) to stop.
func RequestStopIn(d Dir, mode StopMode) error {
	dir := d.Path()
	// Written in place, not renamed, so the watcher sees one write event
	// on the file it watches for.
	return ralphdir.WriteFile(dir, filepath.Join(dir, StopFile), []byte(string(mode)+"\n"))
}

// NotRunningError says no process holds a workspace's lock, so there is
// nothing a request could reach.
type NotRunningError struct {
	Dir  string
	What string // "loop", "autopilot"
}

func (e *NotRunningError) Error() string { return "no " + e.What + " is running in " + e.Dir }

func (e *NotRunningError) Kind() hint.Kind { return hint.Conflict }

// StopRunning asks the loop running in workspace to stop, and says which
// run it asked; a *NotRunningError when none is running.
func StopRunning(workspace string, mode StopMode) (LockInfo, error) {
	return StopRunningIn(In(workspace), mode)
}

// StopRunningIn is StopRunning for the loop whose files are in d (a
// chain step's directory: stopping it stops its chain there).
func StopRunningIn(d Dir, mode StopMode) (LockInfo, error) {
	held, info := LockHeld(d.Lock())
	if !held {
		return info, &NotRunningError{Dir: d.Workspace(), What: "loop"}
	}
	return info, RequestStopIn(d, mode)
}

package runfiles

import (
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// Stop requests written into .ralph/stop by `ralph stop`.
const (
	StopAtBoundary = "next" // stop before the next iteration
	StopNow        = "now"  // interrupt the running iteration
)

// RequestStop asks the loop running in workspace to stop.
func RequestStop(workspace, mode string) error {
	dir := filepath.Join(workspace, DirName)
	// Written in place, not renamed, so the watcher sees one write event
	// on the file it watches for.
	return ralphdir.WriteFile(dir, filepath.Join(dir, StopFile), []byte(mode+"\n"))
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
func StopRunning(workspace, mode string) (LockInfo, error) {
	held, info := LockHeld(filepath.Join(workspace, DirName, LockFile))
	if !held {
		return info, &NotRunningError{Dir: workspace, What: "loop"}
	}
	return info, RequestStop(workspace, mode)
}

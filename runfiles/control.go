package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// ControlRequest is what `ralph autopilot pause|resume|stop [--now]` asks
// of a running autopilot: each writes a file of the request's name under
// .ralph/autopilot-control/, which the running autopilot watches and
// removes once it acts.
type ControlRequest string

// Control requests.
const (
	ControlPause   ControlRequest = "pause"
	ControlResume  ControlRequest = "resume"
	ControlStop    ControlRequest = "stop"     // start no task; running ones finish and merge
	ControlStopNow ControlRequest = "stop-now" // interrupt the loops, leaving them resumable
)

// requestOrder is the order requests found together are acted on: a
// resume after a pause wins, a stop after both. It is also every request
// there is: a file of another name in the control directory is not one.
var requestOrder = []ControlRequest{ControlPause, ControlResume, ControlStop, ControlStopNow}

// ParseControlRequest reads a control request by its name.
func ParseControlRequest(s string) (ControlRequest, error) {
	for _, r := range requestOrder {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("autopilot request %q: want pause, resume, stop or stop-now", s)
}

// Request asks the autopilot running in repo to pause, resume or stop. A
// pause cancels a pending resume and the other way round. It does not
// wait: the autopilot acts within a moment, or when it next starts.
func RequestControl(repo string, req ControlRequest) error {
	dir := In(repo).Control()
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return err
	}
	if _, err := ParseControlRequest(string(req)); err != nil {
		return err // its file would be a request the autopilot never takes
	}
	opposite := map[ControlRequest]ControlRequest{ControlPause: ControlResume, ControlResume: ControlPause}[req]
	if opposite != "" {
		if err := os.Remove(filepath.Join(dir, string(opposite))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return ralphdir.WriteFile(dir, filepath.Join(dir, string(req)), nil)
}

// RequestRunning hands req to the autopilot running in repo, as Request
// does, and says which one it asked; an *NotRunningError when none
// is running.
func RequestRunningAutopilot(repo string, req ControlRequest) (LockInfo, error) {
	held, info := LockHeld(In(repo).AutopilotLock())
	if !held {
		return info, &NotRunningError{Dir: repo, What: "autopilot"}
	}
	return info, RequestControl(repo, req)
}

// TakeControlRequests removes and returns the requests waiting in dir, in
// requestOrder.
func TakeControlRequests(dir string) []ControlRequest {
	var reqs []ControlRequest
	for _, req := range requestOrder {
		if err := os.Remove(filepath.Join(dir, string(req))); err == nil {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

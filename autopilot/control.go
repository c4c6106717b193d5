package autopilot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// ControlRequest is what `ralph autopilot pause|resume|stop [--now]` asks
// of a running autopilot: each writes a file of the request's name under
// .ralph/autopilot-control/, which the running autopilot watches and
// removes once it acts.
type ControlRequest string

// Control requests.
const (
	RequestPause   ControlRequest = "pause"
	RequestResume  ControlRequest = "resume"
	RequestStop    ControlRequest = "stop"     // start no task; running ones finish and merge
	RequestStopNow ControlRequest = "stop-now" // interrupt the loops, leaving them resumable
)

// requestOrder is the order requests found together are acted on: a
// resume after a pause wins, a stop after both. It is also every request
// there is: a file of another name in the control directory is not one.
var requestOrder = []ControlRequest{RequestPause, RequestResume, RequestStop, RequestStopNow}

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
func Request(repo string, req ControlRequest) error {
	dir := runfiles.In(repo).Control()
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return err
	}
	if _, err := ParseControlRequest(string(req)); err != nil {
		return err // its file would be a request the autopilot never takes
	}
	opposite := map[ControlRequest]ControlRequest{RequestPause: RequestResume, RequestResume: RequestPause}[req]
	if opposite != "" {
		if err := os.Remove(filepath.Join(dir, string(opposite))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return ralphdir.WriteFile(dir, filepath.Join(dir, string(req)), nil)
}

// RequestRunning hands req to the autopilot running in repo, as Request
// does, and says which one it asked; an *runfiles.NotRunningError when none
// is running.
func RequestRunning(repo string, req ControlRequest) (runfiles.LockInfo, error) {
	held, info := runfiles.LockHeld(runfiles.In(repo).AutopilotLock())
	if !held {
		return info, &runfiles.NotRunningError{Dir: repo, What: "autopilot"}
	}
	return info, Request(repo, req)
}

// watchControl delivers control requests as they are written. Requests
// left from before are stale, meant for an autopilot that has ended, and
// dropped, as `ralph stop` requests are. Each request is taken (its file
// removed) as it is delivered.
func watchControl(dir string) (<-chan ControlRequest, func(), error) {
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return nil, nil, err
	}
	w, err := filewatch.New(filewatch.Options{Dirs: []string{dir}})
	if err != nil {
		return nil, nil, err
	}
	takeRequests(dir)
	out := make(chan ControlRequest)
	done := make(chan struct{})
	go func() {
		defer close(out)
		deliver := func() bool {
			for _, req := range takeRequests(dir) {
				select {
				case out <- req:
				case <-done:
					return false
				}
			}
			return true
		}
		for {
			select {
			case <-w.C():
				if !deliver() {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() { close(done); w.Close() }, nil
}

// takeRequests removes and returns the requests waiting in dir, in
// requestOrder.
func takeRequests(dir string) []ControlRequest {
	var reqs []ControlRequest
	for _, req := range requestOrder {
		if err := os.Remove(filepath.Join(dir, string(req))); err == nil {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

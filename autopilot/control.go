package autopilot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Control requests: `ralph autopilot pause|resume|stop [--now]` each
// write a file of that name under .ralph/autopilot-control/, which the
// running autopilot watches with fsnotify and removes once it acts.
const (
	RequestPause   = "pause"
	RequestResume  = "resume"
	RequestStop    = "stop"
	RequestStopNow = "stop-now"
)

// requestOrder is the order requests found together are acted on: a
// resume after a pause wins, a stop after both.
var requestOrder = []string{RequestPause, RequestResume, RequestStop, RequestStopNow}

// Request asks the autopilot running in repo to pause, resume or stop. A
// pause cancels a pending resume and the other way round. It does not
// wait: the autopilot acts within a moment, or when it next starts.
func Request(repo, req string) error {
	dir := runfiles.In(repo).Control()
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return err
	}
	opposite := map[string]string{RequestPause: RequestResume, RequestResume: RequestPause}[req]
	if opposite != "" {
		if err := os.Remove(filepath.Join(dir, opposite)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return ralphdir.WriteFile(dir, filepath.Join(dir, req), nil)
}

// RequestRunning hands req to the autopilot running in repo, as Request
// does, and says which one it asked; an *runfiles.NotRunningError when none
// is running.
func RequestRunning(repo, req string) (runfiles.LockInfo, error) {
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
func watchControl(dir string) (<-chan string, func(), error) {
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return nil, nil, err
	}
	w, err := filewatch.New(filewatch.Options{Dirs: []string{dir}})
	if err != nil {
		return nil, nil, err
	}
	takeRequests(dir)
	out := make(chan string)
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
func takeRequests(dir string) []string {
	var reqs []string
	for _, req := range requestOrder {
		if err := os.Remove(filepath.Join(dir, req)); err == nil {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

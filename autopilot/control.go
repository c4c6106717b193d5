package autopilot

import (
	"path/filepath"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// watchControl delivers control requests as they are written. Requests
// left from before are stale, meant for an autopilot that has ended, and
// dropped, as `ralph stop` requests are. Each request is taken (its file
// removed) as it is delivered.
func watchControl(dir string) (<-chan runfiles.ControlRequest, func(), error) {
	if err := ralphdir.MkdirAll(filepath.Dir(dir), dir); err != nil {
		return nil, nil, err
	}
	w, err := filewatch.New(filewatch.Options{Dirs: []string{dir}})
	if err != nil {
		return nil, nil, err
	}
	runfiles.TakeControlRequests(dir)
	out := make(chan runfiles.ControlRequest)
	done := make(chan struct{})
	go func() {
		defer close(out)
		deliver := func() bool {
			for _, req := range runfiles.TakeControlRequests(dir) {
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

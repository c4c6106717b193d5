package watch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// chainPoll is how often nextStep looks again without being told of a
// change: a chain killed outright lets go of its lock without a write,
// and a step's log appears in a directory made after the watch began.
const chainPoll = time.Second

// nextStep waits, once the step whose files are in done has ended, for
// the chain that runs in the workspace dir to start its next step's log,
// and returns that step's directory and log. path is "" when the chain
// ended there (completed, stopped, or no longer running: cut off), with
// where it is; or when ctx ended.
func nextStep(ctx context.Context, dir string, done runfiles.Dir) (step runfiles.Dir, path string, place *runfiles.ChainPlace, err error) {
	place, _, ok := view.ChainHere(dir)
	if !ok {
		return "", "", nil, nil
	}
	w, err := filewatch.New(filewatch.Options{Dirs: []string{runfiles.In(dir).Chain(place.ID)}, Poll: chainPoll})
	if err != nil {
		return "", "", place, fmt.Errorf("follow chain %s: %w", place.ID, err)
	}
	defer w.Close()
	for {
		// Looked after the watch began, so a step that starts in between
		// is not missed.
		step, path, place, over, err := lookNextStep(dir, done)
		if path != "" || over || err != nil {
			return step, path, place, err
		}
		select {
		case <-ctx.Done():
			return "", "", place, nil
		case <-w.C():
		}
	}
}

// lookNextStep is nextStep's one look: the next step's log once it has
// one, or over when the chain will start no other.
func lookNextStep(dir string, done runfiles.Dir) (step runfiles.Dir, path string, place *runfiles.ChainPlace, over bool, err error) {
	place, step, ok := view.ChainHere(dir)
	if !ok {
		return "", "", nil, true, nil
	}
	if step != done {
		path, err := runfiles.CurrentLogIn(step)
		if err == nil {
			return step, path, place, false, nil
		}
		if !errors.Is(err, runfiles.ErrNoLog) {
			return "", "", place, false, err
		}
	}
	return "", "", place, !place.Running || place.Status != "running", nil
}

package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ralph-loop/ralph/events"
)

// LoopReport is what a loop's log says of how its run went, for the
// description of the pull request a finished task is delivered as: how it
// ended and its figures, the agent's last word, and the commits it made.
type LoopReport struct {
	// End is the run's loop.terminate; nil when its run has not ended.
	End *TerminateRecord
	// Last is the last event an agent published (with `ralph emit` or a
	// tag): as a rule, the claim of completion that ended the run, with
	// the agent's summary as its payload.
	Last *events.Event
	// Commits are the commits the loop's iterations made, oldest first.
	Commits []CommitRecord
}

// ReadLoopReport reads the loop log at path (a loop's log, or the copy
// the autopilot keeps of one: runs one after another, whose last end
// counts). A log that does not exist says nothing.
func ReadLoopReport(path string) (LoopReport, error) {
	var r LoopReport
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	defer f.Close()
	err = events.Scan(f, func(rec events.Record) error {
		ev, err := events.ParseLine(rec.Line)
		if err != nil {
			return nil //nolint:nilerr // a line that is not an event says nothing of the run
		}
		switch {
		case ev.Source == events.SourceAgent || ev.Source == events.SourceTag:
			r.Last = &ev
		case ev.Source != events.SourceRalph:
		case ev.Topic == TopicLoopTerminate:
			var end TerminateRecord
			Decode(ev, &end)
			r.End = &end
		case ev.Topic == TopicCommit:
			var c CommitRecord
			Decode(ev, &c)
			r.Commits = append(r.Commits, c)
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("read %s: %w", path, err)
	}
	return r, nil
}

package autopilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// journal writes the autopilot's events: each is appended to the log and
// synced before anything acts on it, folded into the state, and the state
// checkpointed, so a kill at any instant loses nothing the log does not
// have.
type journal struct {
	dir   string // .ralph/
	log   *events.Log
	state *State
	now   func() time.Time
	// onEvent is told each event once it is recorded.
	onEvent func(events.Event, *State)
	// hooks run on each line before the state that folds it is saved;
	// hookCtx is the run's context without its cancellation (each hook
	// has its own time limit).
	hooks   Hooks
	hookCtx context.Context
	// redactor hides secret values in every line before it is written
	// (see write).
	redactor *redact.Redactor
}

// Hooks run the user's lifecycle hooks (package hooks) on the lines of the
// autopilot's log. The contract is engine.Hooks': Fire is given each line
// as it is folded, before a checkpoint is written past it, appends its own
// lines with appendLines (which folds them and hands them back), and
// returns warnings and, for a hook whose failure ends the run, an error.
type Hooks interface {
	Fire(ctx context.Context, runID string, lines []events.Record,
		appendLines func(...events.Event) error) (warnings []string, err error)
}

// loadState reads the checkpoint and folds whatever of the log it has not
// seen, its secret values hidden by r, telling seen (when not nil) each
// line it folds. A checkpoint that cannot be read is moved aside and the
// state is rebuilt from the log; what was done is returned as a notice.
func loadState(dir string, now time.Time, r *redact.Redactor, seen func(events.Record)) (*State, string, error) {
	path := runfiles.Dir(dir).AutopilotState()
	st, notice, err := readCheckpoint(path, now)
	if err != nil {
		return nil, "", err
	}
	if err := foldLog(runfiles.Dir(dir).AutopilotEvents(), st, r, seen); err != nil {
		return nil, "", err
	}
	return st, notice, nil
}

func readCheckpoint(path string, now time.Time) (*State, string, error) {
	data, err := ralphdir.ReadFile(filepath.Dir(path), path)
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), "", nil
	}
	if err != nil {
		return nil, "", ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	st := newState()
	if err := json.Unmarshal(data, st); err == nil && st.Version == stateVersion && st.Active != nil {
		return st, "", nil
	}
	aside := strings.TrimSuffix(path, ".json") + ".corrupt." + now.UTC().Format("20060102T150405Z") + ".json"
	if err := os.Rename(path, aside); err != nil {
		return nil, "", fmt.Errorf("move the unreadable %s aside: %w", path, err)
	}
	return newState(), fmt.Sprintf("%s could not be read; it was moved to %s and the state rebuilt from %s",
		filepath.Base(path), filepath.Base(aside), runfiles.AutopilotEventsFile), nil
}

// peekState is the state in dir as loadState would find it, without
// changing anything: an unreadable checkpoint is left where it is, and the
// log folded from its start.
func peekState(dir string) (*State, error) {
	st := newState()
	if data, err := os.ReadFile(runfiles.Dir(dir).AutopilotState()); err == nil {
		if json.Unmarshal(data, st) != nil || st.Version != stateVersion || st.Active == nil {
			st = newState()
		}
	}
	return st, foldLog(runfiles.Dir(dir).AutopilotEvents(), st, nil, nil)
}

// foldLog applies the log's events past st.Offset, with r's secret values
// hidden: a line written by hand, or by a ralph that did not hide them,
// must not reach the state, progress.md or the hooks.
func foldLog(path string, st *State, r *redact.Redactor, seen func(events.Record)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < st.Offset {
		// The log is shorter than the checkpoint says: it was replaced.
		// The log is the truth; fold it from the start.
		*st = *newState()
	}
	if _, err := f.Seek(st.Offset, 0); err != nil {
		return err
	}
	return events.Scan(f, func(rec events.Record) error {
		if ev, err := events.ParseLine(rec.Line); err == nil {
			ev.Payload = r.JSON(ev.Payload)
			st.Apply(ev)
			if seen != nil {
				seen(events.Record{Offset: rec.Offset, Line: rec.Line, Event: ev})
			}
		}
		st.Offset += rec.End() - rec.Offset
		return nil
	})
}

// record appends one event, folds it, runs the hooks it makes due and
// checkpoints the state. A hook whose failure ends the run is returned
// once the event is recorded.
func (j *journal) record(topic string, p Payload) error {
	return j.recordEvent(topic, p, true)
}

// recordEvent is record, with the hooks fired or not: a notice of a hook's
// failure must not fire hooks, or a failing hook on autopilot.notice
// would be told of its own failure without end.
func (j *journal) recordEvent(topic string, p Payload, hooked bool) error {
	recs, err := j.write(events.Event{TS: j.now().UTC(), Topic: topic, Payload: events.ObjectPayload(p), Source: events.SourceRalph})
	if err != nil {
		return err
	}
	ev := recs[0].Event
	var hookErr error
	if hooked {
		if hookErr, err = j.fire(recs); err != nil {
			return err
		}
	}
	if err := j.save(); err != nil {
		return err
	}
	if err := writeProgress(j.dir, j.state, ev.TS); err != nil {
		return err
	}
	if j.onEvent != nil {
		j.onEvent(ev, j.state)
	}
	return hookErr
}

// write appends lines in one write, synced, and folds them. Their secret
// values are hidden first: the text of a task's failure (a verify
// command's output, a tracker's stderr), a hook's output and everything
// else that came from outside ralph reach the log, the state, progress.md,
// the hooks and the terminal from here.
func (j *journal) write(evs ...events.Event) ([]events.Record, error) {
	for i := range evs {
		evs[i].Payload = j.redactor.JSON(evs[i].Payload)
	}
	if err := j.log.AppendBatch(evs); err != nil {
		return nil, fmt.Errorf("append to %s: %w", runfiles.AutopilotEventsFile, err)
	}
	if err := j.log.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", runfiles.AutopilotEventsFile, err)
	}
	recs := make([]events.Record, 0, len(evs))
	for _, ev := range evs {
		line, err := events.EncodeLine(ev)
		if err != nil {
			return nil, err
		}
		recs = append(recs, events.Record{Offset: j.state.Offset, Line: line[:len(line)-1], Event: ev})
		j.state.Apply(ev)
		j.state.Offset += int64(len(line))
	}
	return recs, nil
}

// fire hands folded lines to the hooks and runs those due. Warnings
// become notices; a hook that failed with on_error: fail is returned as
// hookErr, a failure to write the log as err.
func (j *journal) fire(recs []events.Record) (hookErr, err error) {
	if j.hooks == nil || len(recs) == 0 {
		return nil, nil
	}
	warnings, hookErr := j.hooks.Fire(j.hookCtx, j.state.RunID, recs, func(evs ...events.Event) error {
		now := j.now().UTC()
		for i := range evs {
			evs[i].TS = now
		}
		recs, err := j.write(evs...)
		if err != nil {
			return err
		}
		_, err = j.fire(recs)
		return err
	})
	var fe interface{ ExitCode() int }
	if hookErr != nil && !errors.As(hookErr, &fe) {
		return nil, hookErr // the log could not be written
	}
	for _, w := range warnings {
		if err := j.recordEvent(TopicNotice, Payload{Message: "warning: " + w}, false); err != nil {
			return hookErr, err
		}
	}
	return hookErr, nil
}

// save writes the state atomically.
func (j *journal) save() error {
	data, err := json.MarshalIndent(j.state, "", "  ")
	if err != nil {
		return err
	}
	path := runfiles.Dir(j.dir).AutopilotState()
	if err := ralphdir.WriteFileAtomic(j.dir, path, append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

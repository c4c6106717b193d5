package runfiles

import (
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
)

// The autopilot's log is its truth and autopilot-state.json the fold of it
// up to an offset (AutopilotState.Offset), as the loop's checkpoint is of
// its log: the autopilot appends a line, folds it, then writes the state
// (WriteAutopilotState); a restarted one loads the state and folds what of
// the log it has not seen (LoadAutopilotState).

// LoadAutopilotState reads the autopilot's checkpoint in dir (.ralph/) and
// folds whatever of the log it has not seen, its secret values hidden by
// r, telling seen (when not nil) each line it folds. A checkpoint that
// cannot be read is moved aside and the state is rebuilt from the log;
// what was done is returned as a notice.
func LoadAutopilotState(dir string, now time.Time, r *redact.Redactor, seen func(events.Record)) (*AutopilotState, string, error) {
	path := Dir(dir).AutopilotState()
	st, notice, err := loadAutopilotCheckpoint(path, now)
	if err != nil {
		return nil, "", err
	}
	if err := foldAutopilotLog(Dir(dir).AutopilotEvents(), st, r, seen); err != nil {
		return nil, "", err
	}
	return st, notice, nil
}

func loadAutopilotCheckpoint(path string, now time.Time) (*AutopilotState, string, error) {
	data, err := ralphdir.ReadFile(filepath.Dir(path), path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewAutopilotState(), "", nil
	}
	if err != nil {
		return nil, "", ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	st := NewAutopilotState()
	if err := json.Unmarshal(data, st); err == nil && st.Version == AutopilotStateVersion && st.Active != nil {
		return st, "", nil
	}
	aside := strings.TrimSuffix(path, ".json") + ".corrupt." + now.UTC().Format("20060102T150405Z") + ".json"
	if err := os.Rename(path, aside); err != nil {
		return nil, "", fmt.Errorf("move the unreadable %s aside: %w", path, err)
	}
	return NewAutopilotState(), fmt.Sprintf("%s could not be read; it was moved to %s and the state rebuilt from %s",
		filepath.Base(path), filepath.Base(aside), AutopilotEventsFile), nil
}

// PeekAutopilotState is the state in dir as LoadAutopilotState would find
// it, without changing anything: an unreadable checkpoint is left where it
// is, and the log folded from its start.
func PeekAutopilotState(dir string) (*AutopilotState, error) {
	st := NewAutopilotState()
	if data, err := os.ReadFile(Dir(dir).AutopilotState()); err == nil {
		if json.Unmarshal(data, st) != nil || st.Version != AutopilotStateVersion || st.Active == nil {
			st = NewAutopilotState()
		}
	}
	return st, foldAutopilotLog(Dir(dir).AutopilotEvents(), st, nil, nil)
}

// ReadAutopilotState reads the autopilot's checkpoint in repo and folds
// on from it what the log has past its offset, changing nothing: what a
// reader that never takes the lock goes by. The autopilot writes the
// checkpoint once a pass of its coordinator, after the pass's lines, so
// the log's tail is what happened since. ErrNoAutopilot when no autopilot
// has run there.
func ReadAutopilotState(repo string) (*AutopilotState, error) {
	data, err := os.ReadFile(In(repo).AutopilotState())
	st := NewAutopilotState()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A run's first pass may not have written it yet.
		if _, lerr := os.Stat(In(repo).AutopilotEvents()); lerr != nil {
			return nil, ErrNoAutopilot
		}
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, err
		}
	}
	// The log's lines were hidden as they were written.
	if err := foldAutopilotLog(In(repo).AutopilotEvents(), st, nil, nil); err != nil {
		return nil, err
	}
	return st, nil
}

// foldAutopilotLog applies the log's events past st.Offset, with r's
// secret values hidden: a line written by hand, or by a ralph that did not
// hide them, must not reach the state, progress.md or the hooks.
func foldAutopilotLog(path string, st *AutopilotState, r *redact.Redactor, seen func(events.Record)) error {
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
		*st = *NewAutopilotState()
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

// WriteAutopilotState writes the state to dir's autopilot-state.json
// atomically, so a reader never sees half of it. It is not flushed to
// stable storage: the log is, before the state is written, and a state
// that a machine going down left stale or empty is folded on from its
// offset, or moved aside and rebuilt from the log (LoadAutopilotState).
// A flush of each of the autopilot's several writes a task cost it more
// than all its git but the merges.
func WriteAutopilotState(dir string, st *AutopilotState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := Dir(dir).AutopilotState()
	if err := ralphdir.WriteFileAtomicUnsynced(dir, path, append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

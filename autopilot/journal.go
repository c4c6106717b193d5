package autopilot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/ralph-loop/ralph/events"
)

// File names under .ralph/.
const (
	EventsFile   = "autopilot-events.jsonl"
	StateFile    = "autopilot-state.json"
	LockFile     = "autopilot.lock"
	ProgressFile = "progress.md"
	ControlDir   = "autopilot-control"
	TasksDir     = "autopilot"
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
}

// loadState reads the checkpoint and folds whatever of the log it has not
// seen. A checkpoint that cannot be read is moved aside and the state is
// rebuilt from the log; what was done is returned as a notice.
func loadState(dir string, now time.Time) (*State, string, error) {
	path := filepath.Join(dir, StateFile)
	st, notice, err := readCheckpoint(path, now)
	if err != nil {
		return nil, "", err
	}
	if err := foldLog(filepath.Join(dir, EventsFile), st); err != nil {
		return nil, "", err
	}
	return st, notice, nil
}

func readCheckpoint(path string, now time.Time) (*State, string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
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
		filepath.Base(path), filepath.Base(aside), EventsFile), nil
}

// foldLog applies the log's events past st.Offset.
func foldLog(path string, st *State) error {
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
	return events.Scan(f, func(r events.Record) error {
		if ev, err := events.ParseLine(r.Line); err == nil {
			st.Apply(ev)
		}
		st.Offset += r.End() - r.Offset
		return nil
	})
}

// record appends one event, folds it and checkpoints the state.
func (j *journal) record(topic string, p Payload) error {
	ev := events.Event{TS: j.now().UTC(), Topic: topic, Payload: events.ObjectPayload(p), Source: events.SourceRalph}
	line, err := events.EncodeLine(ev)
	if err != nil {
		return err
	}
	if err := j.log.Append(ev); err != nil {
		return fmt.Errorf("append to %s: %w", EventsFile, err)
	}
	if err := j.log.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", EventsFile, err)
	}
	j.state.Apply(ev)
	j.state.Offset += int64(len(line))
	if err := j.save(); err != nil {
		return err
	}
	if err := writeProgress(j.dir, j.state, ev.TS); err != nil {
		return err
	}
	if j.onEvent != nil {
		j.onEvent(ev, j.state)
	}
	return nil
}

// save writes the state atomically.
func (j *journal) save() error {
	data, err := json.MarshalIndent(j.state, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(j.dir, StateFile)
	if err := renameio.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package runfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/internal/swapfile"
)

// wireState is the JSON of state.json. The version comes first so a reader
// can refuse a file from a newer ralph before trusting anything else in it.
type wireState struct {
	SchemaVersion int    `json:"schema_version"`
	Phase         Phase  `json:"phase"`
	SavedAt       string `json:"saved_at"`
	*RunState
}

// Checkpoint reads and writes .ralph/state.json.
type Checkpoint struct {
	Path string
	// BeforeRename, when set, runs once the new contents are in the
	// spare file and before they replace state.json (a crash-test hook).
	BeforeRename func()
}

// Load reads the checkpoint. It returns ErrNoState when there is none and a
// *CorruptStateError when it cannot be used.
func (c Checkpoint) Load() (*RunState, Phase, error) {
	data, err := ReadNoFollow(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", ErrNoState
	}
	if err != nil {
		return nil, "", ralphdir.Explain(c.Path, fmt.Errorf("read state: %w", err))
	}
	st, phase, err := c.decode(data)
	var corrupt *CorruptStateError
	if errors.As(err, &corrupt) {
		// A reader beside a running loop that held the file open across
		// two checkpoints read a spare being rewritten (see swapfile);
		// the file it opens now is whole.
		if again, readErr := ReadNoFollow(c.Path); readErr == nil && !bytes.Equal(again, data) {
			return c.decode(again)
		}
	}
	return st, phase, err
}

func (c Checkpoint) decode(data []byte) (*RunState, Phase, error) {
	var probe struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, "", &CorruptStateError{Path: c.Path, Err: err}
	}
	if probe.SchemaVersion != SchemaVersion {
		return nil, "", &CorruptStateError{Path: c.Path,
			Err: fmt.Errorf("schema version %d, this ralph reads %d", probe.SchemaVersion, SchemaVersion)}
	}
	w := wireState{RunState: NewRunState()}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return nil, "", &CorruptStateError{Path: c.Path, Err: err}
	}
	if err := w.validate(); err != nil {
		return nil, "", &CorruptStateError{Path: c.Path, Err: err}
	}
	return w.RunState, w.Phase, nil
}

// Save writes the checkpoint atomically: a reader sees the old file or the
// new one, never a mix, whenever the process dies. It is swapped in from a
// spare file (swapfile), so a checkpoint creates and deletes no file.
func (c Checkpoint) Save(s *RunState, phase Phase, now time.Time) error {
	data, err := json.MarshalIndent(wireState{SchemaVersion: SchemaVersion, Phase: phase,
		SavedAt: now.UTC().Format(time.RFC3339Nano), RunState: s}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := swapfile.Write(c.Path, append(data, '\n'), c.BeforeRename); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// CorruptStateName is the name a state.json that could not be read is
// moved aside to, at time stamp.
func CorruptStateName(stamp string) string { return "state.corrupt." + stamp + ".json" }

// MoveAside renames an unusable state file to state.corrupt.<time>.json so
// it is kept for inspection and never overwritten.
func (c Checkpoint) MoveAside(now time.Time) (string, error) {
	dest := filepath.Join(filepath.Dir(c.Path), CorruptStateName(now.UTC().Format("20060102T150405.000000000Z")))
	if err := os.Rename(c.Path, dest); err != nil {
		return "", fmt.Errorf("move corrupt state aside: %w", err)
	}
	return dest, nil
}

func (s *RunState) validate() error {
	switch {
	case s.RunID == "":
		return errors.New("no run_id")
	case s.EventsFile == "":
		return errors.New("no events_file")
	case filepath.IsAbs(s.EventsFile) || !inRalphDir(s.EventsFile):
		return fmt.Errorf("events_file %q is not a file in %s/ or a chain step's directory", s.EventsFile, DirName)
	case s.Offset < 0:
		return fmt.Errorf("negative offset %d", s.Offset)
	}
	if s.Activations == nil {
		s.Activations = map[string]int{}
	}
	if s.Blocked == nil {
		s.Blocked = map[string]int{}
	}
	return nil
}

// removeStaleTempFiles deletes the temporary files of atomic writes to
// dir/<name> that a ralph killed between write and rename left behind
// (internal/atomicfile names them "." + name + digits). Only the lock holder writes
// these files, so under the lock every such file is stale.
func RemoveStaleTempFiles(dir string, names ...string) {
	for _, name := range names {
		matches, _ := filepath.Glob(filepath.Join(dir, "."+name+"*"))
		for _, m := range matches {
			if digits := strings.TrimPrefix(filepath.Base(m), "."+name); digits != "" && strings.Trim(digits, "0123456789") == "" {
				_ = os.Remove(m)
			}
		}
	}
}

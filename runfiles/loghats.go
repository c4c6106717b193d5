package runfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ralph-loop/ralph/events"
)

// RunHats returns the configured hats of the run whose event log is at
// path, by ID in config order, as the last loop.started or loop.resumed line
// records them. ok is false when no line does: the file is missing or is
// not a ralph run's log. The coordinator is not listed; every run has it.
func RunHats(path string) (ids []string, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the run's hats from %s: %w", path, err)
	}
	defer f.Close()
	// A line without its newline does not count yet; nor does one too
	// long to be an event.
	err = events.ScanLines(f, func(rec events.Record) error {
		if rec.Err != nil {
			return nil
		}
		if hats, found := lineHats(rec.Line); found {
			ids, ok = hats, true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read the run's hats from %s: %w", path, err)
	}
	return ids, ok, nil
}

// Topic fields as EncodeLine writes them, to skip the other lines without
// decoding them: `ralph emit --target` reads the whole log each time.
var (
	startedField = []byte(`"topic":"` + TopicLoopStarted + `"`)
	resumedField = []byte(`"topic":"` + TopicLoopResumed + `"`)
)

// lineHats returns the hats a loop.started or loop.resumed line of ralph's
// records, and whether it records them.
func lineHats(line []byte) ([]string, bool) {
	if !bytes.Contains(line, startedField) && !bytes.Contains(line, resumedField) {
		return nil, false
	}
	ev, err := events.ParseLine(line)
	if err != nil || ev.Source != events.SourceRalph ||
		(ev.Topic != TopicLoopStarted && ev.Topic != TopicLoopResumed) {
		return nil, false
	}
	var r struct {
		Hats *[]string `json:"hats"`
	}
	if !Decode(ev, &r) || r.Hats == nil {
		return nil, false
	}
	return *r.Hats, true
}

package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/hint"
)

// EventAt is the line of the log at path that starts at byte offset: the
// offsets by which iteration.started lists a hat's events, and by which a
// prompt names a payload too long to show whole (`ralph events --offset N
// --payload`). A line that is not an event comes back with its Err set, as
// a Reader returns it.
func EventAt(path string, offset int64) (events.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return events.Record{}, fmt.Errorf("open event log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return events.Record{}, fmt.Errorf("read event log %s: %w", path, err)
	}
	if offset >= info.Size() {
		return events.Record{}, &hint.Error{Err: fmt.Errorf("no event at offset %d of %s: the log is %d bytes long", offset, path, info.Size()),
			Fix: "the offset is one iteration.started lists, or that a prompt names, in the same run's log; pick another run with --run ID"}
	}
	if offset > 0 {
		var before [1]byte
		if _, err := f.ReadAt(before[:], offset-1); err != nil {
			return events.Record{}, fmt.Errorf("read event log %s: %w", path, err)
		}
		if before[0] != '\n' {
			return events.Record{}, &hint.Error{Err: fmt.Errorf("offset %d of %s is inside a line, not at the start of one", offset, path),
				Fix: "the offset is one iteration.started lists, or that a prompt names, in the same run's log; pick another run with --run ID"}
		}
	}
	var rec events.Record
	found := false
	err = events.ScanLines(io.NewSectionReader(f, offset, info.Size()-offset), func(r events.Record) error {
		rec, found = r, true
		rec.Offset += offset
		rec.Line = bytes.Clone(r.Line)
		return io.EOF // the one line
	})
	if err != nil && !errors.Is(err, io.EOF) {
		return events.Record{}, fmt.Errorf("read event log %s: %w", path, err)
	}
	if !found {
		return events.Record{}, fmt.Errorf("the line at offset %d of %s is still being written", offset, path)
	}
	if rec.Offset != offset {
		rec = events.Record{Offset: offset} // a blank line, which ScanLines skips
	}
	if rec.Err == nil {
		rec.Event, rec.Err = events.ParseLine(rec.Line)
	}
	return rec, nil
}

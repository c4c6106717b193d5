package runfiles

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// ActivityRecord is one line of activity.jsonl: what an agent did, as the
// backend normalized it, redacted as every report is.
type ActivityRecord struct {
	TS        time.Time           `json:"ts"`
	Iteration int                 `json:"iteration"`
	Hat       string              `json:"hat,omitempty"`
	Kind      events.ActivityKind `json:"kind"`
	Text      string              `json:"text,omitempty"`
	Tool      events.ToolKind     `json:"tool,omitempty"`
	ToolName  string              `json:"tool_name,omitempty"`
	Path      string              `json:"path,omitempty"`
	Command   string              `json:"command,omitempty"`
	Tokens    *events.Usage       `json:"tokens,omitempty"`
	CostUSD   float64             `json:"cost_usd,omitempty"`
	ResetAt   time.Time           `json:"reset_at,omitzero"` // when a rate limit lifts, if known
}

// ActivityWriter appends a run's activity to its ActivityFile. Lines are
// encoded in a buffer it keeps, not one made for each: a line is written
// for each report of an agent's activity. It is not for concurrent use.
type ActivityWriter struct {
	f   *os.File
	buf bytes.Buffer
	enc *json.Encoder // into buf, as json.Marshal encodes, with a newline
}

// OpenActivity opens run runID's activity in workspace for appending,
// making it when there is none.
func OpenActivity(workspace, runID string) (*ActivityWriter, error) {
	return OpenActivityIn(In(workspace), runID)
}

// OpenActivityIn is OpenActivity for a run whose files are in d (a chain
// step's directory).
func OpenActivityIn(d Dir, runID string) (*ActivityWriter, error) {
	f, err := ralphdir.OpenFile(d.Path(), d.Activity(runID), os.O_WRONLY|os.O_APPEND|os.O_CREATE, ralphdir.FileMode)
	if err != nil {
		return nil, err
	}
	w := &ActivityWriter{f: f}
	w.enc = json.NewEncoder(&w.buf)
	return w, nil
}

// Append writes one record as one line.
func (w *ActivityWriter) Append(rec ActivityRecord) error {
	w.buf.Reset()
	if err := w.enc.Encode(rec); err != nil {
		return nil // nothing in a record fails to encode; a record that did is dropped
	}
	// One write of a whole line on an O_APPEND file: a reader never sees
	// half of one, except while it is being written.
	_, err := w.f.Write(w.buf.Bytes())
	return err
}

// Close closes the file.
func (w *ActivityWriter) Close() error { return w.f.Close() }

// ReadActivity calls visit with each record of the activity file at path
// from byte offset from on, and returns where the records it read end: a
// line without its newline is still being written and is left for the next
// read; one that is not a record (too long, not JSON) is passed over. A
// file that cannot be opened has nothing past from.
func ReadActivity(path string, from int64, visit func(ActivityRecord)) int64 {
	f, err := os.Open(path)
	if err != nil {
		return from
	}
	defer f.Close()
	var read int64 // from from: offsets are relative to the section
	_ = events.ScanLines(io.NewSectionReader(f, from, math.MaxInt64-from), func(line events.Record) error {
		read = line.End()
		var rec ActivityRecord
		if line.Err == nil && json.Unmarshal(line.Line, &rec) == nil {
			visit(rec)
		}
		return nil
	})
	return from + read
}

package engine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// Status is what `ralph status` reports about a workspace. Iteration is
// the iteration running now, else how many iterations finished;
// Confirming says the running one checks a completion claim, and
// Confirmations how many finished ones did: max_iterations counts neither.
type Status struct {
	Running       bool           `json:"running"`
	PID           int            `json:"pid,omitempty"`
	RunID         string         `json:"run_id,omitempty"`
	Iteration     int            `json:"iteration"`
	MaxIter       int            `json:"max_iterations,omitempty"`
	Confirming    bool           `json:"confirming,omitempty"`
	Confirmations int            `json:"confirmation_iterations,omitempty"`
	Hat           string         `json:"hat,omitempty"`
	Phase         Phase          `json:"phase,omitempty"`
	Elapsed       string         `json:"elapsed,omitempty"`
	CostUSD       float64        `json:"cost_usd"`
	Tokens        int64          `json:"tokens"`
	Pending       int            `json:"pending"`
	EventsFile    string         `json:"events_file,omitempty"`
	Ended         *Termination   `json:"ended,omitempty"`
	Recent        []events.Event `json:"recent_events,omitempty"`
}

// ReadStatus reads the lock and the checkpoint of workspace without
// changing either. recent bounds how many of the last events it includes.
func ReadStatus(workspace string, recent int, now time.Time) (Status, error) {
	dir := filepath.Join(workspace, DirName)
	var s Status
	held, info := LockHeld(filepath.Join(dir, LockFile))
	s.Running = held
	if held {
		s.PID = info.PID
	}
	st, phase, err := Checkpoint{Path: filepath.Join(dir, StateFile)}.Load()
	if errors.Is(err, ErrNoState) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.RunID, s.Iteration, s.MaxIter, s.Phase = st.RunID, st.Iteration, st.MaxIterations, phase
	s.CostUSD, s.Tokens, s.Pending, s.EventsFile = st.CostUSD, st.Usage.Total(), len(st.Pending), st.EventsFile
	s.Ended, s.Confirmations = st.Terminated, st.ConfirmationIterations
	if r := st.Running; r != nil {
		s.Hat = r.Hat
		if held {
			// st.Iteration counts finished iterations; the one running
			// is the next. A run killed mid-iteration shows what it
			// finished: that iteration runs again on resume.
			s.Iteration, s.Confirming = r.Iteration, r.Confirming
		}
	}
	s.Elapsed = elapsed(st, held, now).Round(time.Second).String()
	s.Recent = lastEvents(filepath.Join(workspace, st.EventsFile), recent)
	return s, nil
}

// elapsed is the run's runtime: up to now while it runs, and for a run
// that was killed (its segment open, nobody holding the lock) up to its
// last line, as a resume will count it.
func elapsed(st *RunState, held bool, now time.Time) time.Duration {
	switch {
	case st.SegmentStart.IsZero():
		return st.PriorRuntime
	case held:
		return st.Runtime(now)
	case st.LastEventAt.Before(st.SegmentStart):
		return st.PriorRuntime
	}
	return st.Runtime(st.LastEventAt)
}

// lastEvents returns the last n well-formed events of a log, in log order,
// leaving out malformed and blank lines and a last line still being
// written. It reads the log backwards from its end, so it costs the n lines
// (and whatever malformed ones lie among them), whatever the log's size.
func lastEvents(path string, n int) []events.Event {
	if n <= 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	b := events.NewBackwardScanner(f, info.Size())
	var dec events.Decoder
	var out []events.Event // newest first
	for len(out) < n {
		_, line, err := b.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil
		}
		// The event owns its bytes: it keeps nothing of the line, which
		// b reuses.
		if ev, err := dec.ParseLine(line); err == nil {
			out = append(out, ev)
		}
	}
	slices.Reverse(out)
	return out
}

package runfiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// Chain is the chain whose current step's loop this is; nil for the
	// workspace's own loop.
	Chain         *ChainPlace `json:"chain,omitempty"`
	Running       bool        `json:"running"`
	PID           int         `json:"pid,omitempty"`
	RunID         string      `json:"run_id,omitempty"`
	Iteration     int         `json:"iteration"`
	MaxIter       int         `json:"max_iterations,omitempty"`
	Confirming    bool        `json:"confirming,omitempty"`
	Confirmations int         `json:"confirmation_iterations,omitempty"`
	Hat           string      `json:"hat,omitempty"`
	// Sandbox is how the latest iteration's agent was confined
	// ("landlock", "bwrap, network deny", "off").
	Sandbox string  `json:"sandbox,omitempty"`
	Phase   Phase   `json:"phase,omitempty"`
	Elapsed string  `json:"elapsed,omitempty"`
	CostUSD float64 `json:"cost_usd"`
	// CostSource is how CostUSD is known (reported, computed, or unknown
	// when no part of it is); CostUnknown that some iteration's cost is
	// unknown, so CostUSD is less than what the run spent. The iteration
	// running now is one: the checkpoint has its cost only once it ends.
	CostSource  CostSource `json:"cost_source,omitempty"`
	CostUnknown bool       `json:"cost_unknown"`
	Tokens      int64      `json:"tokens"`
	// Backend is the backend the run's iterations run on, when its log
	// says (the running iteration's, else the one cli's fallback chain
	// switched to); Unavailable the backends of a chain not tried until
	// their reset, or a resume; ByBackend what each backend's iterations
	// used, when more than one ran.
	Backend     string                  `json:"backend,omitempty"`
	Unavailable map[string]Unavailable  `json:"unavailable_backends,omitempty"`
	ByBackend   map[string]BackendTotal `json:"by_backend,omitempty"`
	Pending     int                     `json:"pending"`
	EventsFile  string                  `json:"events_file,omitempty"`
	Ended       *Termination            `json:"ended,omitempty"`
	// Waiting is the question the run waits on a person to answer.
	Waiting *Question `json:"waiting_for_human,omitempty"`
	// Wave is the wave the running iteration runs, LastWave how the last
	// one that finished went.
	Wave     *WaveProgress `json:"wave,omitempty"`
	LastWave *WaveProgress `json:"last_wave,omitempty"`
	// Paced is the pacing budget the running loop waits for before its
	// next iteration (loop.paced).
	Paced *PacedRecord `json:"paced,omitempty"`
	// Unfinished says the run was cut off and nothing runs it now: ralph
	// was killed (the log does not end the run; Phase is where it was),
	// or the run ended interrupted or stopped. A resume goes on with it,
	// and a plain new run is refused until it is resumed or archived.
	Unfinished bool `json:"unfinished,omitempty"`
	// Mode is the run's mode as it was launched (ModeLoop, ModeSpec),
	// which says the command that resumes it.
	Mode string `json:"mode,omitempty"`
	// Hint is what to do next about an unfinished run, in the command
	// line's words. The views fill it (view/api); the engine never does.
	Hint   string         `json:"hint,omitempty"`
	Recent []events.Event `json:"recent_events,omitempty"`
	// Objective is the run's objective, whole, for `ralph status
	// --objective`: a prompt shows only the beginning and end of a long
	// one. It is left out of the JSON, where it could be megabytes.
	Objective string `json:"-"`
}

// Cost is the run's cost as a total.
func (s Status) Cost() CostTotal {
	return CostTotal{USD: s.CostUSD, Computed: s.CostSource == CostComputed, Unknown: s.CostUnknown}
}

// ChainPlace is where a chain (`ralph chain run`) is, for the views: the
// loop they show is its current step's.
type ChainPlace struct {
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Step    int    `json:"step"`
	Steps   int    `json:"steps"`
	Label   string `json:"label"`
	Status  string `json:"status"`
	Running bool   `json:"running"`
	// Where says it in a few words: "chain review-then-fix: step 2/3
	// (tdd)".
	Where string `json:"where"`
}

// ReadStatus reads the lock and the checkpoint of workspace without
// changing either. recent bounds how many of the last events it includes.
func ReadStatus(workspace string, recent int, now time.Time) (Status, error) {
	return ReadStatusIn(In(workspace), recent, now)
}

// ReadStatusIn is ReadStatus for the run whose files are in d (a chain
// step's directory).
func ReadStatusIn(d Dir, recent int, now time.Time) (Status, error) {
	held, info := LockHeld(filepath.Join(d.Path(), LockFile))
	return readStatusIn(d, recent, now, held, info)
}

// ReadExitedStatus is ReadStatus of a run whose ralph the caller started
// and saw exit, with whatever it started: nobody holds its lock, and
// asking (LockHeld) may read the open files of every process on the
// machine, several milliseconds a run.
func ReadExitedStatus(workspace string, recent int, now time.Time) (Status, error) {
	return readStatusIn(In(workspace), recent, now, false, LockInfo{})
}

func readStatusIn(d Dir, recent int, now time.Time, held bool, info LockInfo) (Status, error) {
	dir, workspace := d.Path(), d.Workspace()
	var s Status
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
	s.RunID, s.Iteration, s.MaxIter, s.Phase, s.Objective = st.RunID, st.Iteration, st.MaxIterations, phase, st.Objective
	s.CostUSD, s.Tokens, s.Pending, s.EventsFile = st.CostUSD, st.Usage.Total(), len(st.Pending), st.EventsFile
	s.Ended, s.Confirmations = st.Terminated, st.ConfirmationIterations
	s.CostSource, s.CostUnknown = st.Cost().Source(), st.CostUnknown
	s.Sandbox = st.Sandbox
	if r := st.Running; r != nil {
		s.Hat = r.Hat
		if held {
			// st.Iteration counts finished iterations; the one running
			// is the next. A run killed mid-iteration shows what it
			// finished: that iteration runs again on resume.
			s.Iteration, s.Confirming = r.Iteration, r.Confirming
			s.CostUnknown = true
			s.CostSource = CostTotal{USD: s.CostUSD, Computed: s.CostSource == CostComputed, Unknown: true}.Source()
		}
	}
	if st.Launch != nil {
		s.Mode = st.Launch.Mode
	}
	// The log past the checkpoint may hold the question, or its answer,
	// or the run's end that a killed ralph did not checkpoint.
	if cur, _, err := readRunStateIn(d); err == nil && cur != nil {
		if s.Ended == nil && cur.RunID == st.RunID {
			s.Ended = cur.Terminated
		}
		if cur.Terminated == nil {
			s.Waiting = cur.Question
		}
		if cur.Terminated == nil && held {
			s.Paced = cur.Paced
		}
		if cur.RunID == st.RunID {
			st = cur // the log is ahead of the checkpoint
		}
	}
	s.backends(st, now)
	if st.Wave != nil {
		p := st.Wave.Progress()
		s.Wave = &p
	}
	if st.LastWave != nil {
		p := st.LastWave.Progress()
		s.LastWave = &p
	}
	s.Unfinished = !held && (s.Ended == nil || s.Ended.Reason.Unfinished())
	s.Elapsed = elapsed(st, held, now).Round(time.Second).String()
	s.Recent = LastEvents(filepath.Join(workspace, st.EventsFile), recent)
	return s, nil
}

// backends fills in which backend the run is on, which are out, and, when
// more than one ran, what each used.
func (s *Status) backends(st *RunState, now time.Time) {
	s.Backend = st.ChainBackend[""]
	if r := st.Running; r != nil && r.Backend != "" {
		s.Backend = r.Backend
	}
	for name, u := range st.Unavailable {
		if !u.AvailableAt(now) {
			if s.Unavailable == nil {
				s.Unavailable = map[string]Unavailable{}
			}
			s.Unavailable[name] = u
		}
	}
	if len(st.ByBackend) > 1 {
		s.ByBackend = st.ByBackend
	}
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

// LastEvents returns the last n well-formed events of a log, in log order,
// leaving out malformed and blank lines and a last line still being
// written. It reads the log backwards from its end, so it costs the n lines
// (and whatever malformed ones lie among them), whatever the log's size.
func LastEvents(path string, n int) []events.Event {
	if n <= 0 {
		return nil
	}
	var out []events.Event // newest first
	err := scanBack(path, func(ev events.Event) bool {
		out = append(out, ev)
		return len(out) == n
	})
	if err != nil {
		return nil
	}
	slices.Reverse(out)
	return out
}

// scanBack calls visit with the well-formed events of the log at path,
// newest first, until visit says it is done or the log's start. The event
// owns its bytes: it keeps nothing of the line, which the scanner reuses.
func scanBack(path string, visit func(events.Event) (done bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	b := events.NewBackwardScanner(f, info.Size())
	var dec events.Decoder
	for {
		rec, err := b.Prev()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Err != nil {
			continue // too long to be an event
		}
		if ev, err := dec.ParseLine(rec.Line); err == nil && visit(ev) {
			return nil
		}
	}
}

// LogProgress is where a loop is as the end of its event log says, for a
// loop whose workspace is not at hand (a remote task's copy of its log).
type LogProgress struct {
	// Hat and Iteration are those of the log's last iteration.started or
	// iteration.finished line; zero before the first iteration.
	Hat       string
	Iteration int
	// Ended is the reason of the loop.terminate that ends the log's last
	// run; "" while it runs, or when it died before it could say.
	Ended Reason
}

// ReadLogProgress reads the log at path backwards, as `ralph status` reads
// its recent events, to the last iteration line and the last of ralph's
// run boundaries, and no further than the last run's loop.started: an
// earlier run's iterations are not this run's. A missing log has made no
// progress.
func ReadLogProgress(path string) (LogProgress, error) {
	var p LogProgress
	var sawIteration, sawBoundary bool
	err := scanBack(path, func(ev events.Event) bool {
		if ev.Source != events.SourceRalph {
			return false
		}
		switch ev.Topic {
		case TopicIterationStarted, TopicIterationFinished:
			if !sawIteration {
				var r IterationStartedRecord
				Decode(ev, &r)
				p.Hat, p.Iteration, sawIteration = r.Hat, r.Iteration, true
			}
		case TopicLoopTerminate:
			if !sawBoundary {
				var r TerminateRecord
				Decode(ev, &r)
				p.Ended, sawBoundary = r.Reason, true
			}
		case TopicLoopResumed:
			sawBoundary = true
		case TopicLoopStarted:
			return true
		}
		return sawIteration && sawBoundary
	})
	if errors.Is(err, fs.ErrNotExist) {
		return LogProgress{}, nil
	}
	if err != nil {
		return LogProgress{}, fmt.Errorf("read the end of %s: %w", path, err)
	}
	return p, nil
}

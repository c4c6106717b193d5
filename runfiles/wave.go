package runfiles

import (
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// The lines of a wave: one hat's iteration that runs one worker per event
// of a wave, several at once (engine/wave.go).
//
//	wave.started          the wave's iteration runs it: its events, by index
//	wave.worker_finished  one worker ended; its lines are its events file up to events_bytes
//	wave.finished         every worker's lines are merged into the log, just before it
//
// The merged lines are the workers' own (source agent or tag), each with
// the wave's id and the index of the worker that wrote it, in worker
// order, then each worker's order. The fold counts them per worker
// (WaveState.Merged), so a merge cut off by a crash goes on where it
// stopped rather than write a line twice.
const (
	TopicWaveStarted        = "wave.started"
	TopicWaveWorkerFinished = "wave.worker_finished"
	TopicWaveFinished       = "wave.finished"
)

// WaveStartedRecord is the payload of wave.started.
type WaveStartedRecord struct {
	Iteration   int    `json:"iteration"`
	Hat         string `json:"hat"`
	WaveID      string `json:"wave_id"`
	Total       int    `json:"total"`
	Concurrency int    `json:"concurrency"`
	// Events are the offsets of the wave's events, the i-th worker's i-th.
	Events []int64 `json:"events"`
	// WorkerTimeoutMS bounds each worker; DeadlineMS, when set, is how
	// long after the wave started its results are collected with what
	// arrived (the aggregator's timeout).
	WorkerTimeoutMS int64 `json:"worker_timeout_ms"`
	DeadlineMS      int64 `json:"deadline_ms,omitempty"`
}

// WaveWorkerRecord is the payload of wave.worker_finished.
type WaveWorkerRecord struct {
	WaveID     string             `json:"wave_id"`
	Iteration  int                `json:"iteration"`
	Hat        string             `json:"hat"`
	Index      int                `json:"index"`
	Outcome    Outcome            `json:"outcome"`
	ExitCode   int                `json:"exit_code"`
	Failure    events.FailureKind `json:"failure,omitempty"`
	Message    string             `json:"message,omitempty"`
	DurationMS int64              `json:"duration_ms"`
	Usage      events.Usage       `json:"tokens"`
	CostUSD    float64            `json:"cost_usd"`
	CostSource CostSource         `json:"cost_source,omitempty"`
	Model      string             `json:"model,omitempty"`
	Backend    string             `json:"backend,omitempty"`
	// EventsFile is the worker's events file, relative to the workspace;
	// its first EventsBytes bytes are the worker's lines, whatever was
	// appended to it later.
	EventsFile  string `json:"events_file"`
	EventsBytes int64  `json:"events_bytes"`
	Attempt     int    `json:"attempt,omitempty"`
	// Missed says the worker never ran, or was stopped, because the
	// wave's deadline passed: its result is missing.
	Missed bool `json:"missed,omitempty"`
	// Limit is the run's limit (max_runtime, max_cost, budget_exhausted)
	// that the run reached while the worker ran or waited to start: it
	// was stopped, or never started, and its result is missing. The run
	// ends on that limit once the wave is merged.
	Limit Reason `json:"limit,omitempty"`
	// Moved says the attempt failed for its provider's sake (a far rate
	// limit, credentials, an overloaded service) and the worker runs
	// again on the next backend of its hat's chain: what the attempt used
	// counts toward the run, as a failed iteration's does, but the worker
	// has not finished.
	Moved bool `json:"moved,omitempty"`
}

// Failed reports whether the worker left no result of its own.
func (r WaveWorkerRecord) Failed() bool { return r.Outcome != OutcomeSuccess }

// Stopped reports whether the run's limit, not the worker, kept its
// result from it.
func (r WaveWorkerRecord) Stopped() bool { return r.Limit != "" }

// WaveFinishedRecord is the payload of wave.finished.
type WaveFinishedRecord struct {
	WaveID    string `json:"wave_id"`
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	Total     int    `json:"total"`
	// Succeeded, Failed and Missed are worker indexes: those that
	// finished well, failed, or were cut off by the wave's deadline.
	// Stopped are those the run's limit (Limit) stopped or kept from
	// starting.
	Succeeded []int  `json:"succeeded"`
	Failed    []int  `json:"failed,omitempty"`
	Missed    []int  `json:"missed,omitempty"`
	Stopped   []int  `json:"stopped,omitempty"`
	Limit     Reason `json:"limit,omitempty"`
	Lines     int    `json:"lines"`
}

// WaveState is a wave the fold has seen start and not finish.
type WaveState struct {
	WaveStartedRecord
	StartedAt time.Time `json:"started_at"`
	// Done are the workers that finished, by index; Merged counts the
	// lines of each already merged into the log.
	Done   map[int]WaveWorkerRecord `json:"done"`
	Merged map[int]int              `json:"merged,omitempty"`
	// Moved are the attempts of workers that moved to another backend
	// (WaveWorkerRecord.Moved), whose use the wave's iteration adds up
	// with its workers'.
	Moved []WaveWorkerRecord `json:"moved,omitempty"`
}

// Pending are the indexes of the workers that have not finished, in order.
func (w *WaveState) Pending() []int {
	var out []int
	for i := range w.Total {
		if _, ok := w.Done[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// Deadline is when the wave's results are collected with what arrived;
// zero when it waits for every worker.
func (w *WaveState) Deadline() time.Time {
	if w.DeadlineMS <= 0 {
		return time.Time{}
	}
	return w.StartedAt.Add(time.Duration(w.DeadlineMS) * time.Millisecond)
}

// WaveProgress is how a wave is going, as every view shows it: Done
// counts the workers that have ended, Failed those of them that failed,
// missed the wave's deadline or were stopped by the run's limit.
type WaveProgress struct {
	ID          string `json:"wave_id"`
	Hat         string `json:"hat"`
	Iteration   int    `json:"iteration"`
	Total       int    `json:"workers"`
	Concurrency int    `json:"concurrency"`
	Done        int    `json:"done"`
	Failed      int    `json:"failed"`
}

// Progress is how w is going.
func (w *WaveState) Progress() WaveProgress {
	p := WaveProgress{ID: w.WaveID, Hat: w.Hat, Iteration: w.Iteration, Total: w.Total, Concurrency: w.Concurrency, Done: len(w.Done)}
	for _, r := range w.Done {
		if r.Failed() {
			p.Failed++
		}
	}
	return p
}

// Progress is how the finished wave went.
func (w WaveSummary) Progress() WaveProgress {
	return WaveProgress{ID: w.WaveID, Hat: w.Hat, Iteration: w.Iteration, Total: w.Total,
		Done: w.Total, Failed: len(w.Failed) + len(w.Missed) + len(w.Stopped)}
}

// WaveSummary is the last wave that finished, for the views.
type WaveSummary struct {
	WaveFinishedRecord
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

// MissingText says which workers of a finished wave have no result, for
// the prompt of the hat that collects it; "" when all have one.
func (w WaveFinishedRecord) MissingText() string {
	var s string
	if len(w.Failed) > 0 {
		s += fmt.Sprintf(" Workers %s failed.", indexList(w.Failed))
	}
	if len(w.Missed) > 0 {
		s += fmt.Sprintf(" Workers %s did not finish before the wave's timeout and were stopped.", indexList(w.Missed))
	}
	if len(w.Stopped) > 0 {
		s += fmt.Sprintf(" Workers %s were stopped when the run reached its %s limit.", indexList(w.Stopped), w.Limit.LimitName())
	}
	if s == "" {
		return ""
	}
	return fmt.Sprintf("Wave %s of hat %s: %d of %d workers have a result.%s Their results are missing: work with what arrived, and say what is missing.",
		w.WaveID, w.Hat, len(w.Succeeded), w.Total, s)
}

// indexList is 1-based worker numbers, as the workers' prompts count them.
func indexList(idx []int) string {
	var s string
	for i, n := range idx {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(n + 1)
	}
	return s
}

func (s *RunState) startWave(r WaveStartedRecord, at time.Time) {
	s.Wave = &WaveState{WaveStartedRecord: r, StartedAt: at, Done: map[int]WaveWorkerRecord{}}
}

// finishWorker records a worker's end and counts what it used, at once:
// a worker that finished is not run again, whatever happens to the wave;
// one that moved to another backend is, and what its attempt used counts
// all the same.
func (s *RunState) finishWorker(r WaveWorkerRecord, at time.Time) {
	w := s.Wave
	if w == nil || w.WaveID != r.WaveID {
		return
	}
	if _, seen := w.Done[r.Index]; seen {
		return
	}
	if r.Moved {
		w.Moved = append(w.Moved, r)
	} else {
		w.Done[r.Index] = r
	}
	used := IterationFinishedRecord{Outcome: r.Outcome, Usage: r.Usage, CostUSD: r.CostUSD}
	s.Usage = s.Usage.Add(r.Usage)
	s.CostUSD += r.CostUSD
	s.CostComputed = s.CostComputed || r.CostSource == CostComputed
	s.CostUnknown = s.CostUnknown || r.CostSource == CostUnknown
	s.addBackendTotal(r.Backend, used)
	s.spend(at, used)
}

// mergedLine counts a worker's line merged into the log.
func (s *RunState) mergedLine(ev events.Event) {
	w := s.Wave
	if w == nil || !ev.InWave() || ev.WaveID != w.WaveID || ev.Hat != w.Hat || ev.Iteration != w.Iteration {
		return
	}
	if w.Merged == nil {
		w.Merged = map[int]int{}
	}
	w.Merged[ev.WaveIndex]++
}

func (s *RunState) finishWave(r WaveFinishedRecord, at time.Time) {
	var started time.Time
	if s.Wave != nil && s.Wave.WaveID == r.WaveID {
		started = s.Wave.StartedAt
		s.Wave = nil
	}
	s.LastWave = &WaveSummary{WaveFinishedRecord: r, StartedAt: started, FinishedAt: at}
}

// WaveOutcome is how a wave's iteration ended: a failure when a worker
// failed or missed, as an iteration's agent failing is. Workers a limit
// stopped do not make it one: the run ends on the limit, and an agent a
// limit never cuts short in a plain iteration would not have failed.
func WaveOutcome(r WaveFinishedRecord) Outcome {
	if len(r.Failed) > 0 || len(r.Missed) > 0 {
		return OutcomeFailure
	}
	return OutcomeSuccess
}

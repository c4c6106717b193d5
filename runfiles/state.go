package runfiles

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// SchemaVersion is the version of state.json this ralph writes and reads.
const SchemaVersion = 1

// Router decides which hats receive a routable event. An empty result means
// the coordinator takes it.
type Router interface {
	Route(ev events.Event) []string
}

// PendingEvent is an event waiting for a hat.
type PendingEvent struct {
	Offset int64        `json:"offset"`
	Event  events.Event `json:"event"`
	// To are the hats it was routed to; empty means the coordinator.
	To []string `json:"to"`
}

// UndecidedEvent is an agent-written line not yet accepted or rejected.
type UndecidedEvent struct {
	Offset int64        `json:"offset"`
	Event  events.Event `json:"event"`
}

// RunningIteration is an iteration that has started and not finished.
type RunningIteration struct {
	Iteration  int       `json:"iteration"`
	Hat        string    `json:"hat"`
	Events     []int64   `json:"events"`
	Confirming bool      `json:"confirming,omitempty"`
	Backend    string    `json:"backend,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	// Offset is where iteration.started begins; the agent's lines follow it.
	Offset int64 `json:"offset"`
}

// FinishedIteration summarises the last finished iteration.
type FinishedIteration struct {
	Iteration  int     `json:"iteration"`
	Hat        string  `json:"hat"`
	Outcome    Outcome `json:"outcome"`
	Message    string  `json:"message,omitempty"`
	Confirming bool    `json:"confirming,omitempty"`
	Said       string  `json:"said,omitempty"`
	Changed    bool    `json:"changed,omitempty"`
	Commits    int     `json:"commits,omitempty"`
	TasksDone  int     `json:"tasks_done,omitempty"`
}

// Termination records how a run ended.
type Termination struct {
	Reason   Reason `json:"reason"`
	ExitCode int    `json:"exit_code"`
	Message  string `json:"message,omitempty"`
	// Cause and GoOn are the facts behind the message that the command
	// line turns into advice: what cut the run off, how to go past the
	// limit that ended it.
	Cause Cause     `json:"cause,omitempty"`
	GoOn  *GoOn     `json:"go_on,omitempty"`
	At    time.Time `json:"at"`
}

// RunState is everything ralph knows about a run: the fold of its event log
// up to Offset. It is what state.json holds.
type RunState struct {
	RunID      string `json:"run_id"`
	EventsFile string `json:"events_file"` // relative to the workspace
	Offset     int64  `json:"offset"`
	Objective  string `json:"objective,omitempty"`
	Source     string `json:"objective_source,omitempty"`
	// Launch is how the command line started the run, as its last
	// loop.started or loop.resumed recorded it.
	Launch *Launch `json:"launch,omitempty"`
	// MaxIterations is the limit in force, for status displays.
	MaxIterations int `json:"max_iterations,omitempty"`
	// Sandbox is how the latest iteration's agent was confined, as its
	// iteration.started says ("landlock", "off", …).
	Sandbox string `json:"sandbox,omitempty"`

	// Iteration counts iterations that ran to an end (success or failure);
	// ConfirmationIterations counts those among them that checked a
	// completion claim, which max_iterations does not count.
	Iteration              int               `json:"iteration"`
	ConfirmationIterations int               `json:"confirmation_iterations,omitempty"`
	Running                *RunningIteration `json:"running,omitempty"`
	// LastFinished is the last iteration that finished; Settled is the last
	// iteration whose consequences were published.
	LastFinished *FinishedIteration `json:"last_finished,omitempty"`
	Settled      int                `json:"settled"`
	LastNote     string             `json:"last_note,omitempty"`

	Pending     []PendingEvent   `json:"pending"`
	Undecided   []UndecidedEvent `json:"undecided,omitempty"`
	Activations map[string]int   `json:"activations"`
	Exhausted   []string         `json:"exhausted,omitempty"`
	SeenTopics  []string         `json:"seen_topics"`

	ConsecutiveFailures  int            `json:"consecutive_failures"`
	ConsecutiveMalformed int            `json:"consecutive_malformed"`
	MalformedTotal       int            `json:"malformed_total"`
	LastMalformed        int64          `json:"last_malformed_offset,omitempty"`
	Blocked              map[string]int `json:"blocked,omitempty"`
	Rejected             int            `json:"rejected"`
	Commits              int            `json:"commits"`
	TasksDone            int            `json:"tasks_done,omitempty"`
	Accepted             int            `json:"accepted"`

	Usage   events.Usage `json:"tokens"`
	CostUSD float64      `json:"cost_usd"`
	// CostComputed says some of CostUSD was computed from tokens (not
	// reported by the agent); CostUnknown that some iteration's cost is
	// unknown, so CostUSD is less than the run cost.
	CostComputed bool `json:"cost_computed,omitempty"`
	CostUnknown  bool `json:"cost_unknown,omitempty"`

	StartedAt    time.Time     `json:"started_at"`
	SegmentStart time.Time     `json:"segment_start"`
	LastEventAt  time.Time     `json:"last_event_at"`
	PriorRuntime time.Duration `json:"prior_runtime_ns"`

	// StartCommit is HEAD when the run started; Baseline says which
	// acceptance criteria passed before the first iteration.
	StartCommit string          `json:"start_commit,omitempty"`
	Baseline    map[string]bool `json:"baseline,omitempty"`
	// NoProgress counts successful iterations in a row that made no
	// progress; Tried names their hats, for the stuck summary.
	NoProgress int      `json:"no_progress"`
	Tried      []string `json:"tried,omitempty"`

	// RateLimitedUntil is when the last rate limit lifts; an iteration
	// that ends clears it. A run resumed before then waits first.
	RateLimitedUntil time.Time `json:"rate_limited_until,omitempty"`
	// Spent is what the iterations of the last PaceHorizon used, for the
	// pacing budgets' windows; Paced is the pacing wait the run is in (its
	// loop.paced line), nil once the next iteration starts (pace.go).
	Spent []Spent      `json:"spent,omitempty"`
	Paced *PacedRecord `json:"paced,omitempty"`
	// ChainBackend is the backend each chain (cli.fallback; "" for cli's,
	// else the hat whose backend heads it) was last switched to: its
	// primary until a backend.switched line says otherwise. Unavailable
	// are the backends not tried until their reset, or until the run is
	// resumed; ByBackend what each backend's iterations used.
	ChainBackend map[string]string       `json:"chain_backend,omitempty"`
	Unavailable  map[string]Unavailable  `json:"unavailable_backends,omitempty"`
	ByBackend    map[string]BackendTotal `json:"by_backend,omitempty"`

	// Wave is the wave in flight: started and not yet merged into the log;
	// LastWave the last one that was.
	Wave     *WaveState   `json:"wave,omitempty"`
	LastWave *WaveSummary `json:"last_wave,omitempty"`
	// Confirming holds the completion claim a confirmation iteration checks.
	Confirming *string `json:"confirming,omitempty"`
	Completed  bool    `json:"completed,omitempty"`
	// CompletedBy says what ralph checked when it, not a claim, completed
	// the run (VerifiedBySpec, VerifiedByCriteria); "" for a claim.
	CompletedBy string `json:"completed_by,omitempty"`
	Cancelled   bool   `json:"cancelled,omitempty"`
	// StillFailing names the criteria that failed when the completion was
	// accepted, let through because they failed before the run too.
	StillFailing []string `json:"still_failing,omitempty"`

	// Question is the question an agent asked that waits for a person's
	// answer; the run does not start another iteration while it waits.
	Question *Question `json:"question,omitempty"`

	Terminated *Termination `json:"terminated,omitempty"`
}

// NewRunState is the state of a run before its first line.
func NewRunState() *RunState {
	return &RunState{Activations: map[string]int{}, Blocked: map[string]int{}}
}

// Runtime is how long the run has been active: earlier segments plus the
// current one up to now.
func (s *RunState) Runtime(now time.Time) time.Duration {
	if s.SegmentStart.IsZero() {
		return s.PriorRuntime
	}
	return s.PriorRuntime + now.Sub(s.SegmentStart)
}

// CountedIterations is how many finished iterations count against
// max_iterations: all but those that confirmed a completion claim. The
// confirmation is ralph's check of work already done, so a task finished on
// the last allowed iteration succeeds whatever completion_confirmations is.
func (s *RunState) CountedIterations() int {
	return s.Iteration - s.ConfirmationIterations
}

// Apply folds one log record into the state. It is the only place run state
// changes, so folding a whole log rebuilds the checkpoint.
func (s *RunState) Apply(rec events.Record, router Router) {
	s.Offset = rec.End()
	if rec.Err != nil {
		s.ConsecutiveMalformed++
		s.MalformedTotal++
		s.LastMalformed = rec.Offset
		return
	}
	ev := rec.Event
	if closesQuestion(ev) {
		s.closeQuestion(rec)
		s.noteTime(ev.TS)
		return
	}
	if ev.Source != events.SourceRalph {
		s.noteTime(ev.TS)
		s.applyAgentLine(rec)
		return
	}
	if IsBookkeeping(ev.Topic) {
		// Bookkeeping reads LastEventAt as it was before this line: a
		// resume closes the segment at the last line of the one before.
		s.applyBookkeeping(rec)
		s.noteTime(ev.TS)
		return
	}
	s.noteTime(ev.TS)
	s.enqueue(rec.Offset, ev, router.Route(ev))
	if strings.HasSuffix(ev.Topic, SuffixBlocked) {
		s.Blocked[blockKey(ev)]++
	}
}

func (s *RunState) applyAgentLine(rec events.Record) {
	if events.ValidateTopic(rec.Event.Topic) != nil {
		// A line whose topic cannot be routed is as broken as one that is
		// not JSON; it still gets a decision so it is reported once.
		s.ConsecutiveMalformed++
		s.MalformedTotal++
	} else {
		s.ConsecutiveMalformed = 0
	}
	s.Undecided = append(s.Undecided, UndecidedEvent{Offset: rec.Offset, Event: rec.Event})
	s.mergedLine(rec.Event)
}

func (s *RunState) applyBookkeeping(rec events.Record) {
	ev := rec.Event
	switch ev.Topic {
	case TopicLoopStarted:
		var r LoopStartedRecord
		Decode(ev, &r)
		s.RunID, s.Objective, s.MaxIterations, s.StartCommit = r.RunID, r.Objective, r.MaxIter, r.Head
		s.Source, s.Launch = r.Source, r.Launch
		s.StartedAt, s.SegmentStart = ev.TS, ev.TS
	case TopicLoopResumed:
		var r LoopResumedRecord
		Decode(ev, &r)
		if r.MaxIter > 0 {
			s.MaxIterations = r.MaxIter
		}
		if r.Launch != nil {
			s.Launch = r.Launch
		}
		// A segment still open here was cut off by a crash: nothing
		// recorded its end, and the time ralph was dead is not runtime,
		// so it ends at its last line.
		s.closeSegment(s.LastEventAt)
		if s.Question == nil {
			s.SegmentStart = ev.TS // else the clock starts with the answer
		}
		s.forgiveFailures()
		s.resumeBackends()
		s.Terminated, s.Paced = nil, nil
	case TopicIterationStarted:
		var r IterationStartedRecord
		Decode(ev, &r)
		s.Running = &RunningIteration{Iteration: r.Iteration, Hat: r.Hat, Events: r.Events,
			Confirming: r.Confirming, Backend: r.Backend, StartedAt: ev.TS, Offset: rec.Offset}
		s.Paced = nil
		if r.Sandbox != "" {
			s.Sandbox = r.Sandbox
		}
	case TopicIterationFinished:
		var r IterationFinishedRecord
		Decode(ev, &r)
		s.finishIteration(r)
		if r.WaveID == "" {
			s.spend(ev.TS, r) // a wave's workers were counted as each ended
		}
	case TopicIterationSettled:
		var r IterationSettledRecord
		Decode(ev, &r)
		s.settle(r)
	case TopicEventRouted:
		var r RoutedRecord
		Decode(ev, &r)
		s.route(r, ev.TS)
	case TopicEventRejected:
		var r RejectedRecord
		Decode(ev, &r)
		if _, ok := s.takeUndecided(r.Offset); ok {
			s.Rejected++
		}
	case TopicEventDropped:
		var r DroppedRecord
		Decode(ev, &r)
		s.dropPending(r.Offsets)
		if r.Reason == "exhausted" && !slices.Contains(s.Exhausted, r.Hat) {
			s.Exhausted = append(s.Exhausted, r.Hat)
		}
	case TopicRateLimited:
		var r RateLimitedRecord
		Decode(ev, &r)
		s.RateLimitedUntil = ev.TS.Add(time.Duration(r.WaitMS) * time.Millisecond)
		s.applyLimit(r)
	case TopicLoopPaced:
		var r PacedRecord
		Decode(ev, &r)
		s.Paced = &r
	case TopicBackendSwitched:
		var r BackendSwitchedRecord
		Decode(ev, &r)
		s.applySwitch(r)
	case TopicWaveStarted:
		var r WaveStartedRecord
		Decode(ev, &r)
		s.startWave(r, ev.TS)
	case TopicWaveWorkerFinished:
		var r WaveWorkerRecord
		Decode(ev, &r)
		s.finishWorker(r, ev.TS)
	case TopicWaveFinished:
		var r WaveFinishedRecord
		Decode(ev, &r)
		s.finishWave(r, ev.TS)
	case TopicCommit:
		s.Commits++
	case TopicTaskComplete:
		s.TasksDone++
	case TopicCriteriaBaseline:
		var r BaselineRecord
		Decode(ev, &r)
		s.Baseline = map[string]bool{}
		for _, b := range r.Results {
			s.Baseline[b.Name] = b.Passed
		}
	case TopicCriteriaIgnored:
		var r IgnoredRecord
		Decode(ev, &r)
		s.StillFailing = r.Criteria
	case TopicCompletionVerified:
		var r VerifiedRecord
		Decode(ev, &r)
		s.Completed, s.CompletedBy = true, r.By
	case TopicLoopRepaired:
		var r RepairedRecord
		Decode(ev, &r)
		// A line torn by a crash is ralph's own lost write, not an agent's
		// malformed event: it must not count towards validation_failure.
		if r.Offset == s.LastMalformed && s.ConsecutiveMalformed > 0 {
			s.ConsecutiveMalformed--
			s.MalformedTotal--
		}
	case TopicCompletionConfirm:
		var r ConfirmingRecord
		Decode(ev, &r)
		s.Confirming = &r.Claim
	case TopicLoopTerminate:
		var r TerminateRecord
		Decode(ev, &r)
		s.Terminated = &Termination{Reason: r.Reason, ExitCode: r.ExitCode, Message: r.Message,
			Cause: r.Cause, GoOn: r.GoOn, At: ev.TS}
		s.Paced = nil
		s.closeSegment(ev.TS)
	}
}

// closesQuestion reports whether ev may close a question: a person's
// answer, or ralph's note that the deadline passed.
func closesQuestion(ev events.Event) bool {
	return (ev.Topic == TopicHumanAnswered && ev.Source == events.SourceHuman) ||
		(ev.Topic == TopicHumanTimedOut && ev.Source == events.SourceRalph)
}

// noteTime records when the latest line was written.
func (s *RunState) noteTime(ts time.Time) {
	if !ts.IsZero() {
		s.LastEventAt = ts
	}
}

// forgiveFailures starts afresh the count that ended the run, when a run
// that stopped on failure is resumed: the user resumes it because they
// fixed the cause, and the old count would end it again before a single
// iteration could show that. A run ended by a limit keeps its counts; the
// limit is what a resume raises.
func (s *RunState) forgiveFailures() {
	if s.Terminated == nil {
		return
	}
	switch s.Terminated.Reason {
	case ReasonConsecutiveFailures:
		s.ConsecutiveFailures = 0
	case ReasonLoopThrashing:
		s.Blocked = map[string]int{}
	case ReasonValidationFailure:
		s.ConsecutiveMalformed = 0
	case ReasonCompleted, ReasonCancelled, ReasonInterrupted, ReasonStopped, ReasonStuck, ReasonNoAnswer,
		ReasonMaxIterations, ReasonMaxRuntime, ReasonMaxCost, ReasonBudgetExhausted, ReasonFatal:
		// No failure count ended the run; the counts stand.
	}
}

// closeSegment adds the active time of the segment that ended at end.
func (s *RunState) closeSegment(end time.Time) {
	if !s.SegmentStart.IsZero() && end.After(s.SegmentStart) {
		s.PriorRuntime += end.Sub(s.SegmentStart)
	}
	s.SegmentStart = time.Time{}
}

func (s *RunState) finishIteration(r IterationFinishedRecord) {
	running := s.Running
	s.Running = nil
	if r.Outcome != OutcomeRateLimited && r.Outcome != OutcomeInterrupted && r.Outcome != OutcomeSwitched {
		s.RateLimitedUntil = time.Time{}
	}
	if r.WaveID == "" {
		s.Usage = s.Usage.Add(r.Usage)
		s.CostUSD += r.CostUSD
		if running != nil {
			s.addBackendTotal(running.Backend, r)
		}
		s.CostComputed = s.CostComputed || r.CostSource == CostComputed
		s.CostUnknown = s.CostUnknown || r.CostSource == CostUnknown
	}
	if r.WaveID != "" && r.Outcome == OutcomeFailure && running != nil {
		// A wave is not run again for its failed workers: their results
		// are missing, and the hat that collects the wave is told so.
		s.Activations[r.Hat]++
		s.dropPending(running.Events)
	}
	switch r.Outcome {
	case OutcomeRateLimited, OutcomeInterrupted, OutcomeSwitched:
		// The iteration is repeated with the same number and events.
		return
	case OutcomeSuccess:
		s.ConsecutiveFailures = 0
		s.Activations[r.Hat]++
		if running != nil && !running.Confirming {
			s.dropPending(running.Events)
		}
	default:
		s.ConsecutiveFailures++
	}
	if r.Confirming {
		s.ConfirmationIterations++
	}
	s.Iteration = r.Iteration
	s.LastFinished = &FinishedIteration{Iteration: r.Iteration, Hat: r.Hat, Outcome: r.Outcome,
		Message: r.Message, Confirming: r.Confirming, Said: r.Said, Changed: r.Changed, Commits: r.Commits, TasksDone: r.TasksDone}
}

func (s *RunState) settle(r IterationSettledRecord) {
	if r.Iteration > s.Settled {
		s.Settled = r.Iteration
	}
	if last := s.LastFinished; last != nil && last.Iteration == r.Iteration && last.Outcome == OutcomeSuccess {
		if r.Progress {
			s.NoProgress, s.Tried = 0, nil
		} else {
			s.NoProgress++
			s.Tried = append(s.Tried, last.Hat)
		}
	}
	s.LastNote = r.Note
	if s.LastFinished != nil && s.LastFinished.Iteration == r.Iteration && s.LastFinished.Confirming && !s.Completed {
		s.Confirming = nil
	}
}

func (s *RunState) route(r RoutedRecord, at time.Time) {
	u, ok := s.takeUndecided(r.Offset)
	if !ok {
		return // decided already: a decision is applied once
	}
	s.Accepted++
	s.see(u.Event.Topic)
	if strings.HasSuffix(u.Event.Topic, SuffixBlocked) {
		s.Blocked[blockKey(u.Event)]++
	}
	switch r.As {
	case AsCompletion:
		s.Completed = true
	case AsCancellation:
		s.Cancelled = true
	case AsClaim:
		// The claim itself is recorded by completion.confirming.
	case AsQuestion:
		s.ask(u, r, at)
	default:
		s.Pending = append(s.Pending, PendingEvent{Offset: r.Offset, Event: u.Event, To: r.To})
	}
}

func (s *RunState) enqueue(offset int64, ev events.Event, to []string) {
	s.Pending = append(s.Pending, PendingEvent{Offset: offset, Event: ev, To: to})
}

func (s *RunState) takeUndecided(offset int64) (UndecidedEvent, bool) {
	for i, u := range s.Undecided {
		if u.Offset == offset {
			s.Undecided = slices.Delete(s.Undecided, i, i+1)
			return u, true
		}
	}
	return UndecidedEvent{}, false
}

func (s *RunState) dropPending(offsets []int64) {
	s.Pending = slices.DeleteFunc(s.Pending, func(p PendingEvent) bool {
		return slices.Contains(offsets, p.Offset)
	})
}

func (s *RunState) see(topic string) {
	i := sort.SearchStrings(s.SeenTopics, topic)
	if i < len(s.SeenTopics) && s.SeenTopics[i] == topic {
		return
	}
	s.SeenTopics = slices.Insert(s.SeenTopics, i, topic)
}

// FailedAtBaseline reports whether the criterion failed before the run.
func (s *RunState) FailedAtBaseline(name string) bool {
	passed, ok := s.Baseline[name]
	return ok && !passed
}

// Seen reports whether an accepted event had this topic.
func (s *RunState) Seen(topic string) bool {
	_, ok := slices.BinarySearch(s.SeenTopics, topic)
	return ok
}

// MaxBlocked is the highest count of one blocked event (topic and first
// payload line), and that event's key.
func (s *RunState) MaxBlocked() (string, int) {
	key, n := "", 0
	for k, c := range s.Blocked {
		if c > n || (c == n && k < key) {
			key, n = k, c
		}
	}
	return key, n
}

func blockKey(ev events.Event) string { return ev.Topic + ": " + ev.FirstLine() }

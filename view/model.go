package view

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// Reporter is what a view is told: the engine's reports, and SPEC mode's
// checked boxes and stuck runs.
type Reporter interface {
	engine.Reporter
	engine.TaskReporter
	engine.StuckReporter
	engine.HumanReporter
	engine.NoticeReporter
	engine.PaceReporter
	engine.SwitchReporter
	engine.WaveReporter
}

// Phase is where the current iteration is.
type Phase string

// The phases of an iteration.
const (
	PhaseStarting Phase = ""        // before the first iteration
	PhaseRunning  Phase = "running" // an agent is running
	PhaseBetween  Phase = "between" // the agent exited; ralph decides what next
	PhaseWaiting  Phase = "waiting" // a rate limit: waiting to repeat the iteration
	// PhaseAwaitingHuman: an agent asked a question; no iteration starts
	// until a person answers it or its deadline passes.
	PhaseAwaitingHuman Phase = "awaiting_human"
	// PhasePaced: a pacing budget's window is full; the next iteration
	// waits until Run.Paced.Until.
	PhasePaced Phase = "paced"
)

// Figures are what agents spent: tokens, dollars and tool uses.
// CostComputed and CostUnknown say how CostUSD is known, as in
// runfiles.CostTotal.
type Figures struct {
	Usage        events.Usage
	CostUSD      float64
	CostComputed bool
	CostUnknown  bool
	Tools        events.ToolCounts
}

// Add is f and g together.
func (f Figures) Add(g Figures) Figures {
	return Figures{Usage: f.Usage.Add(g.Usage), CostUSD: f.CostUSD + g.CostUSD, Tools: addTools(f.Tools, g.Tools),
		CostComputed: f.CostComputed || g.CostComputed, CostUnknown: f.CostUnknown || g.CostUnknown}
}

// Cost is the figures' cost and how it is known.
func (f Figures) Cost() runfiles.CostTotal {
	return runfiles.CostTotal{USD: f.CostUSD, Computed: f.CostComputed, Unknown: f.CostUnknown}
}

// runningFigures are f, a running iteration's figures so far: its cost is
// unknown until its agent reports some (many report it only as they end),
// so a run's total while an iteration runs is never a false "$0.0000".
func runningFigures(f Figures) Figures {
	f.CostUnknown = f.CostUSD == 0
	return f
}

// costFigures are the cost figures of c.
func costFigures(c runfiles.CostTotal) Figures {
	return Figures{CostUSD: c.USD, CostComputed: c.Computed, CostUnknown: c.Unknown}
}

func addTools(a, b events.ToolCounts) events.ToolCounts {
	return events.ToolCounts{Read: a.Read + b.Read, Write: a.Write + b.Write, Shell: a.Shell + b.Shell, Other: a.Other + b.Other}
}

// Run is a run as the views know it at one moment. Figures are split into
// the finished iterations (Done) and the one running (Live), because the
// running agent's figures are replaced by its result when it ends.
type Run struct {
	ID string
	// Chain is where the chain this run is a step of is ("chain
	// review-then-fix: step 2/3 (tdd)"), "" for a run of its own.
	Chain string
	// Started is when the run started, as if it had run its elapsed time
	// without a break; Stopped is when its clock stopped (it ended, waits
	// for a person's answer, or no process runs it), zero while it runs.
	Started time.Time
	Stopped time.Time
	N, Max  int
	Hat     string
	Backend string
	// Sandbox is how the agent is confined ("landlock", "off", …; "" when
	// the log does not say).
	Sandbox    string
	Confirming bool
	Phase      Phase
	PhaseSince time.Time
	WaitUntil  time.Time // while waiting for a rate limit
	// Paced is the pacing wait the run is in (its loop.paced), nil when
	// it is in none.
	Paced *runfiles.PacedRecord
	// Wave is the wave the iteration runs (a hat with concurrency), nil
	// when it runs one agent.
	Wave *runfiles.WaveProgress
	// Question is the question the run waits on a person to answer, nil
	// when it waits for none.
	Question    *runfiles.Question
	LastOutcome runfiles.Outcome // of the last iteration that finished
	Done, Live  Figures
	// ByBackend is what the finished iterations used by backend, for a
	// run whose fallback chain (cli.fallback) moved it between backends
	// (BackendList words it).
	ByBackend map[string]runfiles.BackendTotal
	// Commits are those made during this process's part of the run.
	Commits   []engine.Commit
	LastEvent string
	// Stuck is set once the run was reported stuck.
	Stuck bool
	// Summary is the run's end, nil until it ends.
	Summary *engine.Summary
	// Ended is how a run read from its files ended (`ralph watch`), nil
	// while it has not; Gone says no process runs it now, though it did
	// not end (it was killed, and goes on with --resume).
	Ended *runfiles.Termination
	Gone  bool
}

// Elapsed is how long the run has been at work by now: up to when its
// clock stopped, if it did.
func (r Run) Elapsed(now time.Time) time.Duration {
	if r.Started.IsZero() {
		return 0
	}
	if !r.Stopped.IsZero() {
		now = r.Stopped
	}
	return now.Sub(r.Started)
}

// Total is what the run's agents spent so far, the running one included.
func (r Run) Total() Figures { return r.Done.Add(r.Live) }

// LastCommit is the latest commit as "hash subject", "" before the first.
func (r Run) LastCommit() string {
	if len(r.Commits) == 0 {
		return ""
	}
	c := r.Commits[len(r.Commits)-1]
	return shortHash(c.Hash) + " " + c.Subject
}

// Model keeps one Run up to date from the engine's reports. It is a
// Reporter: put it first in a Tee, and the views after it read it.
type Model struct {
	now func() time.Time
	mu  sync.Mutex
	run Run
}

// NewModel starts a model whose clock is now.
func NewModel(now func() time.Time) *Model {
	m := &Model{now: now}
	m.run.Started = now()
	return m
}

// Run returns the run as it is now.
func (m *Model) Run() Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.run
	r.Commits = slices.Clip(r.Commits)
	r.ByBackend = maps.Clone(r.ByBackend)
	return r
}

func (m *Model) update(f func(*Run)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.run)
}

func (m *Model) LoopStarted(run engine.RunInfo) {
	m.update(func(r *Run) { r.ID, r.Max, r.Started = run.RunID, run.MaxIter, m.now() })
}

func (m *Model) IterationStarted(it engine.IterationInfo) {
	m.update(func(r *Run) {
		r.N, r.Max, r.Hat, r.Backend, r.Confirming = it.N, it.Max, it.Hat.ID, it.Backend, it.Confirming
		r.Sandbox = it.Sandbox
		r.Phase, r.PhaseSince, r.Paced, r.Wave = PhaseRunning, it.Started, nil, nil
		if r.PhaseSince.IsZero() {
			r.PhaseSince = m.now()
		}
		r.Live = runningFigures(Figures{})
	})
}

func (m *Model) Activity(_ engine.IterationInfo, a events.Activity) {
	switch a.Kind {
	case events.ActivityUsage:
		// Usage activities are increments (see backends/jsonl.go); the
		// iteration's result replaces their sum when it finishes.
		m.update(func(r *Run) {
			r.Live.Usage = r.Live.Usage.Add(a.Usage)
			r.Live.CostUSD += a.CostUSD
			r.Live = runningFigures(r.Live)
		})
	case events.ActivityTool:
		m.update(func(r *Run) { r.Live.Tools.Count(a.Tool) })
	case events.ActivityText, events.ActivityRateLimit, events.ActivityError, events.ActivityWarning:
	}
}

func (m *Model) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	m.update(func(r *Run) { r.LastEvent = routeText(ev.Topic, to, as) })
}

func (m *Model) EventRejected(ev events.Event, reason string) {
	code, _ := splitReason(reason)
	m.update(func(r *Run) { r.LastEvent = ev.Topic + " rejected (" + code + ")" })
}

func (m *Model) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	m.update(func(r *Run) {
		done := costFigures(runfiles.CostTotal{}.Add(iterationCost(it, res)))
		done.Usage, done.Tools = res.Usage, res.Tools
		r.Done = r.Done.Add(done)
		r.ByBackend = addBackend(r.ByBackend, it, res, done.CostUSD)
		r.Live = Figures{}
		r.Phase, r.PhaseSince, r.LastOutcome = PhaseBetween, m.now(), outcomeOf(it, res)
	})
}

func (m *Model) Commit(_ engine.IterationInfo, c engine.Commit) {
	m.update(func(r *Run) { r.Commits = append(r.Commits, c) })
}

func (m *Model) RateLimited(_ engine.IterationInfo, wait time.Duration) {
	m.update(func(r *Run) {
		r.Phase, r.PhaseSince, r.WaitUntil = PhaseWaiting, m.now(), m.now().Add(wait)
	})
}

// WaveProgress notes how the iteration's wave is going.
func (m *Model) WaveProgress(_ engine.IterationInfo, w runfiles.WaveProgress) {
	m.update(func(r *Run) { r.Wave = &w })
}

// Paced notes that the next iteration waits for a pacing budget.
func (m *Model) Paced(p runfiles.PacedRecord) {
	m.update(func(r *Run) { r.Phase, r.PhaseSince, r.Paced = PhasePaced, m.now(), &p })
}

// addBackend counts a finished iteration against its backend, as the
// fold of the log does (runfiles.RunState.ByBackend).
func addBackend(by map[string]runfiles.BackendTotal, it engine.IterationInfo, res events.AgentResult, usd float64) map[string]runfiles.BackendTotal {
	if it.Backend == "" {
		return by
	}
	if by == nil {
		by = map[string]runfiles.BackendTotal{}
	}
	t := by[it.Backend]
	t.Usage, t.CostUSD = t.Usage.Add(res.Usage), t.CostUSD+usd
	if o := outcomeOf(it, res); o == runfiles.OutcomeSuccess || o == runfiles.OutcomeFailure {
		t.Iterations++
	}
	by[it.Backend] = t
	return by
}

// BackendSwitched notes that the run goes on with another backend of its
// chain.
func (m *Model) BackendSwitched(_ engine.IterationInfo, sw runfiles.BackendSwitchedRecord) {
	m.update(func(r *Run) { r.Backend, r.LastEvent = sw.To, SwitchText(sw) })
}

// TaskComplete notes a SPEC.md checkbox that became checked.
func (m *Model) TaskComplete(index int, text string) {
	m.update(func(r *Run) { r.LastEvent = fmt.Sprintf("task %d done: %s", index+1, text) })
}

// Stuck notes that iterations stopped making progress.
func (m *Model) Stuck(end runfiles.Termination, _ int) {
	m.update(func(r *Run) { r.LastEvent, r.Stuck = "stuck: "+EndMessage(end), true })
}

func (m *Model) Warn(string) {}

func (m *Model) Notice(string) {}

func (m *Model) LoopFinished(sum engine.Summary) {
	m.update(func(r *Run) { r.Summary = &sum })
}

// Tee passes every report to each reporter in turn: the model first, then
// the views that read it.
func Tee(rs ...Reporter) Reporter { return tee(rs) }

type tee []Reporter

func (t tee) LoopStarted(run engine.RunInfo) {
	for _, r := range t {
		r.LoopStarted(run)
	}
}

func (t tee) IterationStarted(it engine.IterationInfo) {
	for _, r := range t {
		r.IterationStarted(it)
	}
}

func (t tee) Activity(it engine.IterationInfo, a events.Activity) {
	for _, r := range t {
		r.Activity(it, a)
	}
}

func (t tee) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	for _, r := range t {
		r.EventAccepted(ev, to, as)
	}
}

func (t tee) EventRejected(ev events.Event, reason string) {
	for _, r := range t {
		r.EventRejected(ev, reason)
	}
}

func (t tee) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	for _, r := range t {
		r.IterationFinished(it, res)
	}
}

func (t tee) Commit(it engine.IterationInfo, c engine.Commit) {
	for _, r := range t {
		r.Commit(it, c)
	}
}

func (t tee) RateLimited(it engine.IterationInfo, wait time.Duration) {
	for _, r := range t {
		r.RateLimited(it, wait)
	}
}

func (t tee) Paced(p runfiles.PacedRecord) {
	for _, r := range t {
		r.Paced(p)
	}
}

func (t tee) BackendSwitched(it engine.IterationInfo, sw runfiles.BackendSwitchedRecord) {
	for _, r := range t {
		r.BackendSwitched(it, sw)
	}
}

func (t tee) WaveProgress(it engine.IterationInfo, w runfiles.WaveProgress) {
	for _, r := range t {
		r.WaveProgress(it, w)
	}
}

func (t tee) TaskComplete(index int, text string) {
	for _, r := range t {
		r.TaskComplete(index, text)
	}
}

func (t tee) Stuck(end runfiles.Termination, withoutProgress int) {
	for _, r := range t {
		r.Stuck(end, withoutProgress)
	}
}

func (t tee) Warn(msg string) {
	for _, r := range t {
		r.Warn(msg)
	}
}

func (t tee) Notice(msg string) {
	for _, r := range t {
		r.Notice(msg)
	}
}

func (t tee) LoopFinished(sum engine.Summary) {
	for _, r := range t {
		r.LoopFinished(sum)
	}
}

// Essentials passes on to r only what people must see even when the
// progress lines are off: warnings, a pacing wait, a stuck run and the end. The headless
// stream's stderr gets these; with --verbose it gets everything.
func Essentials(r Reporter) Reporter { return essentials{r} }

type essentials struct{ r Reporter }

func (essentials) LoopStarted(engine.RunInfo)                                 {}
func (essentials) IterationStarted(engine.IterationInfo)                      {}
func (essentials) Activity(engine.IterationInfo, events.Activity)             {}
func (essentials) EventAccepted(events.Event, []string, runfiles.Disposition) {}
func (essentials) EventRejected(events.Event, string)                         {}
func (essentials) IterationFinished(engine.IterationInfo, events.AgentResult) {}
func (essentials) Commit(engine.IterationInfo, engine.Commit)                 {}
func (essentials) RateLimited(engine.IterationInfo, time.Duration)            {}
func (essentials) TaskComplete(int, string)                                   {}
func (essentials) WaveProgress(engine.IterationInfo, runfiles.WaveProgress)   {}

// BackendSwitched is essential: the run goes on with another agent, which
// spends other money.
func (e essentials) BackendSwitched(it engine.IterationInfo, sw runfiles.BackendSwitchedRecord) {
	e.r.BackendSwitched(it, sw)
}
func (e essentials) Stuck(end runfiles.Termination, withoutProgress int) {
	e.r.Stuck(end, withoutProgress)
}
func (e essentials) Warn(msg string) { e.r.Warn(msg) }

// Paced passes on: a pacing wait can last hours, and a run silent that
// long looks hung.
func (e essentials) Paced(p runfiles.PacedRecord)    { e.r.Paced(p) }
func (essentials) Notice(string)                     {}
func (e essentials) LoopFinished(sum engine.Summary) { e.r.LoopFinished(sum) }

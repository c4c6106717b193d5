package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// turn is what the fake agent does in one iteration.
type turn struct {
	emit    []events.Event // written to the log as `ralph emit` would
	raw     []string       // written to the log as-is
	text    string         // final text (tags go here)
	acts    []events.Activity
	result  events.AgentResult
	err     error
	block   bool // wait for ctx to be cancelled
	onStart func()
}

// fakeBackend plays one turn per call, by hat when byHat has the hat and
// otherwise in order; the last turn repeats.
type fakeBackend struct {
	mu      sync.Mutex
	turns   []turn
	byHat   map[string][]turn
	calls   int
	hatRuns map[string]int
	prompts []string
	hats    []string
}

func (f *fakeBackend) Name() string { return "fake" }

func (f *fakeBackend) Run(ctx context.Context, run events.AgentRun, report func(events.Activity)) (events.AgentResult, error) {
	f.mu.Lock()
	hat, iter, logPath := envOf(run.Env, "RALPH_HAT"), envOf(run.Env, "RALPH_ITERATION"), envOf(run.Env, "RALPH_EVENTS_FILE")
	f.prompts = append(f.prompts, run.Prompt)
	f.hats = append(f.hats, hat)
	t := f.next(hat)
	f.mu.Unlock()
	if t.onStart != nil {
		t.onStart()
	}
	n, _ := strconv.Atoi(iter)
	for _, ev := range t.emit {
		ev.Source, ev.Hat, ev.Iteration = events.SourceAgent, hat, n
		if ev.Payload == nil {
			ev.Payload = events.StringPayload("")
		}
		if err := events.AppendTo(logPath, ev); err != nil {
			return events.AgentResult{}, err
		}
	}
	if len(t.raw) > 0 {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return events.AgentResult{}, err
		}
		for _, l := range t.raw {
			_, _ = f.WriteString(l + "\n")
		}
		_ = f.Close()
	}
	for _, a := range t.acts {
		report(a)
	}
	if t.block {
		<-ctx.Done()
		return events.AgentResult{ExitCode: -1}, ctx.Err()
	}
	res := t.result
	res.FinalText = t.text
	if res.Duration == 0 {
		res.Duration = time.Millisecond
	}
	return res, t.err
}

func (f *fakeBackend) next(hat string) turn {
	if ts, ok := f.byHat[hat]; ok && len(ts) > 0 {
		if f.hatRuns == nil {
			f.hatRuns = map[string]int{}
		}
		i := min(f.hatRuns[hat], len(ts)-1)
		f.hatRuns[hat]++
		return ts[i]
	}
	if len(f.turns) == 0 {
		return turn{}
	}
	i := min(f.calls, len(f.turns)-1)
	f.calls++
	return f.turns[i]
}

func envOf(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// nopReporter discards progress.
type nopReporter struct{}

func (nopReporter) LoopStarted(RunInfo)                                        {}
func (nopReporter) IterationStarted(IterationInfo)                             {}
func (nopReporter) Activity(IterationInfo, events.Activity)                    {}
func (nopReporter) EventAccepted(events.Event, []string, runfiles.Disposition) {}
func (nopReporter) EventRejected(events.Event, string)                         {}
func (nopReporter) IterationFinished(IterationInfo, events.AgentResult)        {}
func (nopReporter) Commit(IterationInfo, Commit)                               {}
func (nopReporter) RateLimited(IterationInfo, time.Duration)                   {}
func (nopReporter) Warn(string)                                                {}
func (nopReporter) LoopFinished(Summary)                                       {}

func twoHats(t testing.TB) *hats.Registry {
	t.Helper()
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "builder", Name: "Builder", Triggers: []string{"build.task"}, Publishes: []string{"build.done", "build.blocked"}},
		{ID: "reviewer", Name: "Reviewer", Triggers: []string{"build.done"}, Publishes: []string{"review.approved", "LOOP_COMPLETE"}},
	}, hats.WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	return reg
}

func settings() Settings {
	return Settings{CompletionTopic: "LOOP_COMPLETE", StartingEvent: "task.start", MaxIterations: 20,
		MaxConsecutiveFailures: 3, Confirmations: 1}
}

func newTestEngine(t testing.TB, dir string, b Backend, s Settings, mod ...func(*Options)) *Engine {
	t.Helper()
	opts := Options{Workspace: dir, Objective: "Build the thing.", Settings: s, Hats: twoHats(t),
		Backend: b, RalphBin: "/usr/local/bin/ralph", Reporter: nopReporter{}}
	for _, m := range mod {
		m(&opts)
	}
	e, err := New(opts)
	require.NoError(t, err)
	return e
}

func tagged(topic, payload string) string {
	return `<event topic="` + topic + `">` + payload + `</event>`
}

func ev(topic, payload string) events.Event {
	return events.Event{Topic: topic, Payload: events.StringPayload(payload)}
}

// happy is the two-hat path: coordinator → builder → reviewer → complete.
func happy() *fakeBackend {
	return &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build it")}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}}},
		"reviewer": {{text: "Approved. " + tagged("LOOP_COMPLETE", "done")}},
	}}
}

func failing() events.AgentResult {
	return events.AgentResult{ExitCode: 1, Failure: events.FailureExit, FailureMessage: "exit status 1"}
}

func TestTermination(t *testing.T) {
	cases := []struct {
		name     string
		backend  *fakeBackend
		settings func(*Settings)
		reason   runfiles.Reason
		code     int
		iters    int
	}{
		{name: "completed", backend: happy(), reason: runfiles.ReasonCompleted, code: 0, iters: 3},
		{name: "completed on the last allowed iteration", backend: happy(),
			settings: func(s *Settings) { s.MaxIterations = 3 }, reason: runfiles.ReasonCompleted, code: 0, iters: 3},
		{name: "max iterations one short of completion", backend: happy(),
			settings: func(s *Settings) { s.MaxIterations = 2 }, reason: runfiles.ReasonMaxIterations, code: 2, iters: 2},
		{name: "a claim on the last allowed iteration is confirmed after it",
			backend:  &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}}},
			settings: func(s *Settings) { s.MaxIterations, s.Confirmations = 1, 2 }, reason: runfiles.ReasonCompleted, code: 0, iters: 2},
		{name: "an unconfirmed claim on the last allowed iteration ends at the limit",
			backend:  &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}, {text: "not done"}}},
			settings: func(s *Settings) { s.MaxIterations, s.Confirmations = 1, 2 }, reason: runfiles.ReasonMaxIterations, code: 2, iters: 2},
		{name: "confirmations do not use up the iterations allowed",
			// claim (1), not confirmed (2), claim (3), confirmed (4):
			// two iterations count against the limit of two.
			backend: &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}, {text: "not done"},
				{text: tagged("LOOP_COMPLETE", "done now")}, {text: tagged("LOOP_COMPLETE", "confirmed")}}},
			settings: func(s *Settings) { s.MaxIterations, s.Confirmations = 2, 2 }, reason: runfiles.ReasonCompleted, code: 0, iters: 4},
		{name: "cancelled", backend: &fakeBackend{turns: []turn{{text: tagged("task.cancel", "not worth it")}}},
			settings: func(s *Settings) { s.CancellationTopic = "task.cancel" }, reason: runfiles.ReasonCancelled, code: 0, iters: 1},
		{name: "consecutive failures", backend: &fakeBackend{turns: []turn{{result: failing()}}},
			reason: runfiles.ReasonConsecutiveFailures, code: 1, iters: 3},
		{name: "agent-reported error counts as a failure",
			backend: &fakeBackend{turns: []turn{{result: events.AgentResult{Failure: events.FailureAgent, FailureMessage: "API Error: 400"}}}},
			reason:  runfiles.ReasonConsecutiveFailures, code: 1, iters: 3},
		{name: "timeout counts as a failure",
			backend: &fakeBackend{turns: []turn{{result: events.AgentResult{ExitCode: -1, Failure: events.FailureTimeout, FailureMessage: "iteration timeout"}}}},
			reason:  runfiles.ReasonConsecutiveFailures, code: 1, iters: 3},
		{name: "a success resets the failure count",
			backend: &fakeBackend{turns: []turn{{result: failing()}, {result: failing()}, {}, {result: failing()}, {result: failing()}, {result: failing()}}},
			reason:  runfiles.ReasonConsecutiveFailures, code: 1, iters: 6},
		{name: "expired credentials are fatal, never retried",
			backend: &fakeBackend{turns: []turn{{result: events.AgentResult{ExitCode: 1, Failure: events.FailureAuth, FailureMessage: "invalid api key"}}}},
			reason:  runfiles.ReasonFatal, code: 3, iters: 1},
		{name: "thrashing on the same blocked event",
			backend: &fakeBackend{byHat: map[string][]turn{
				"ralph":   {{text: tagged("build.task", "build")}},
				"builder": {{emit: []events.Event{ev("build.blocked", "cannot compile\ndetails vary 1")}}},
			}},
			// ralph, builder (blocked 1), ralph, builder (2), ralph, builder (3)
			reason: runfiles.ReasonLoopThrashing, code: 1, iters: 6},
		{name: "malformed lines", backend: &fakeBackend{turns: []turn{{raw: []string{"not json", `{"payload":"no topic"}`, "{broken"}}}},
			reason: runfiles.ReasonValidationFailure, code: 1, iters: 1},
		{name: "max cost", backend: &fakeBackend{turns: []turn{{result: events.AgentResult{CostUSD: 0.6}}}},
			settings: func(s *Settings) { s.MaxCostUSD = 1 }, reason: runfiles.ReasonMaxCost, code: 2, iters: 2},
		{name: "max tokens", backend: &fakeBackend{turns: []turn{{result: events.AgentResult{Usage: events.Usage{InputTokens: 400, OutputTokens: 200}}}}},
			settings: func(s *Settings) { s.MaxTokens = 1000 }, reason: runfiles.ReasonBudgetExhausted, code: 2, iters: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := settings()
			if tc.settings != nil {
				tc.settings(&s)
			}
			out, err := newTestEngine(t, t.TempDir(), tc.backend, s).Run(t.Context())
			if tc.reason == runfiles.ReasonFatal {
				var auth *AgentAuthError
				require.ErrorAs(t, err, &auth)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.reason, out.Reason)
			assert.Equal(t, tc.code, out.ExitCode)
			assert.Equal(t, tc.iters, out.Iterations)
		})
	}
}

// stepClock advances a minute each time an agent runs.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Minute)
}

func TestMaxRuntime(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	b := &fakeBackend{turns: []turn{{onStart: clock.advance}}}
	s := settings()
	s.MaxRuntime = 150 * time.Second
	out, err := newTestEngine(t, t.TempDir(), b, s, func(o *Options) { o.Now = clock.Now }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxRuntime, out.Reason)
	assert.Equal(t, exitcode.Limit, out.ExitCode)
	assert.Equal(t, 3, out.Iterations, "after 3 one-minute iterations the runtime is past 150s")
}

func TestInterruptedRunExits130AndResumes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("build.task", "build it")}},
		"builder": {{block: true, emit: []events.Event{ev("build.progress", "half way")}, onStart: cancel}},
	}}
	out, err := newTestEngine(t, dir, b, settings()).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason)
	assert.Equal(t, exitcode.Interrupted, out.ExitCode)

	// On resume the builder runs again with the same event, and the event
	// it wrote before the interruption is routed exactly once.
	b2 := happy()
	out, err = newTestEngine(t, dir, b2, settings(), func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	// build.progress, written before the interruption, went to the
	// coordinator, which runs once build.task (older) has been handled.
	assert.Equal(t, []string{"builder", "ralph", "reviewer"}, b2.hats)
	assert.Contains(t, b2.prompts[0], "build it")
	recs := readLog(t, dir)
	assert.Equal(t, 1, countDecisions(recs, "build.progress"), "the interrupted iteration's event is decided once")
}

func TestConfirmationIteration(t *testing.T) {
	t.Run("on by default", func(t *testing.T) {
		s := settings()
		s.Confirmations = 2
		b := happy()
		b.byHat["ralph"] = []turn{{text: tagged("build.task", "build it")}, {text: "Verified. " + tagged("LOOP_COMPLETE", "confirmed")}}
		out, err := newTestEngine(t, t.TempDir(), b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
		assert.Equal(t, []string{"ralph", "builder", "reviewer", "ralph"}, b.hats)
		assert.Contains(t, b.prompts[3], "done", "the confirming agent sees the claim")
	})
	t.Run("an unconfirmed claim goes back to work", func(t *testing.T) {
		s := settings()
		s.Confirmations = 2
		b := happy()
		b.byHat["ralph"] = []turn{{text: tagged("build.task", "build it")}, {text: "Not done: tests missing."},
			{text: tagged("build.task", "add tests")}, {text: tagged("LOOP_COMPLETE", "ok")}}
		out, err := newTestEngine(t, t.TempDir(), b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
		assert.Equal(t, []string{"ralph", "builder", "reviewer", "ralph", "ralph", "builder", "reviewer", "ralph"}, b.hats)
	})
}

func TestRequiredEventsHoldCompletion(t *testing.T) {
	s := settings()
	s.RequiredEvents = []string{"review.approved"}
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("LOOP_COMPLETE", "done early")}, {text: tagged("build.task", "build")}, {text: tagged("LOOP_COMPLETE", "done")}},
		"builder":  {{emit: []events.Event{ev("build.done", "ok")}}},
		"reviewer": {{text: tagged("review.approved", "lgtm")}},
	}}
	out, err := newTestEngine(t, t.TempDir(), b, s).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "ralph", "builder", "reviewer", "ralph"}, b.hats)
	assert.Contains(t, b.prompts[1], "review.approved", "the coordinator is told what is missing")
}

func TestDefaultPublishes(t *testing.T) {
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "builder", Triggers: []string{"task.start"}, DefaultPublishes: "build.done"},
		{ID: "finisher", Triggers: []string{"build.done"}, DefaultPublishes: "LOOP_COMPLETE"},
	})
	require.NoError(t, err)
	b := &fakeBackend{byHat: map[string][]turn{"ralph": {{text: tagged("LOOP_COMPLETE", "verified")}}}}
	out, err := newTestEngine(t, t.TempDir(), b, settings(), func(o *Options) { o.Hats = reg }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	// The finisher's default is the completion topic, which is never
	// published for it: the coordinator gets task.resume and completes.
	assert.Equal(t, []string{"builder", "finisher", "ralph"}, b.hats)
}

func TestMaxActivationsExhaustsHat(t *testing.T) {
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "builder", Triggers: []string{"build.task"}, MaxActivations: 2},
	})
	require.NoError(t, err)
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("build.task", "1")}, {text: tagged("build.task", "2")}, {text: tagged("build.task", "3")}, {text: tagged("LOOP_COMPLETE", "stop")}},
		"builder": {{}},
	}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Hats = reg }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "ralph", "builder", "ralph", "ralph"}, b.hats)
	assert.Equal(t, 1, countTopic(readLog(t, dir), "builder.exhausted"))
}

func TestHatScope(t *testing.T) {
	s := settings()
	s.EnforceHatScope = true
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("build.task", "go")}, {text: tagged("LOOP_COMPLETE", "ok")}},
		"builder": {{emit: []events.Event{ev("deploy.prod", "oops")}}},
	}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, s).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	recs := readLog(t, dir)
	assert.Equal(t, 1, countTopic(recs, "builder.scope_violation"))
	assert.Equal(t, 0, countTopic(recs, "event.routed", "deploy.prod"))
}

func TestCheckpointIsTheFoldOfTheLog(t *testing.T) {
	dir := t.TempDir()
	s := settings()
	s.Confirmations = 2
	b := happy()
	b.byHat["ralph"] = []turn{{text: tagged("build.task", "build it")}, {text: tagged("LOOP_COMPLETE", "confirmed")}}
	_, err := newTestEngine(t, dir, b, s).Run(t.Context())
	require.NoError(t, err)
	saved, _, err := runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Load()
	require.NoError(t, err)
	rebuilt := runfiles.NewRunState()
	rebuilt.EventsFile = saved.EventsFile
	for _, rec := range readLog(t, dir) {
		rebuilt.Apply(rec, twoHats(t))
	}
	assert.Equal(t, jsonOf(t, saved), jsonOf(t, rebuilt))
}

func jsonOf(t *testing.T, v any) string {
	b, err := json.MarshalIndent(v, "", " ")
	require.NoError(t, err)
	return string(b)
}

func readLog(t *testing.T, dir string) []events.Record {
	t.Helper()
	rel, err := os.ReadFile(filepath.Join(dir, runfiles.DirName, runfiles.CurrentEventsFile))
	require.NoError(t, err)
	recs, err := events.NewReader(filepath.Join(dir, strings.TrimSpace(string(rel))), 0).Read()
	require.NoError(t, err)
	return recs
}

// countTopic counts lines with topic; with a payload topic given, only
// decision lines about that topic.
func countTopic(recs []events.Record, topic string, about ...string) int {
	n := 0
	for _, r := range recs {
		if r.Err != nil || r.Event.Topic != topic {
			continue
		}
		if len(about) > 0 && !strings.Contains(string(r.Event.Payload), `"topic":"`+about[0]+`"`) {
			continue
		}
		n++
	}
	return n
}

func countDecisions(recs []events.Record, topic string) int {
	return countTopic(recs, runfiles.TopicEventRouted, topic) + countTopic(recs, runfiles.TopicEventRejected, topic)
}

func TestResumeWaitsOutARecordedRateLimit(t *testing.T) {
	dir := t.TempDir()
	clock := &stepClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	ctx, cancel := context.WithCancel(t.Context())
	limited := events.AgentResult{ExitCode: 1, Failure: events.FailureRateLimit, FailureMessage: "usage limit",
		RateLimitResetAt: clock.Now().Add(time.Hour)}
	b := &fakeBackend{turns: []turn{{result: limited, onStart: func() {}}}}
	reporter := &waitRecorder{onWait: cancel}
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Now = clock.Now; o.Reporter = reporter }).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason, "interrupted during the wait")

	// Resumed before the reset: ralph waits again before calling the agent.
	ctx2, cancel2 := context.WithCancel(t.Context())
	b2 := happy()
	reporter2 := &waitRecorder{onWait: cancel2}
	out, err = newTestEngine(t, dir, b2, settings(), func(o *Options) {
		o.Now, o.Reporter, o.Start = clock.Now, reporter2, runfiles.StartResume
	}).Run(ctx2)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason)
	assert.Empty(t, b2.hats, "no agent call while the recorded limit holds")
	require.Len(t, reporter2.waits, 1)
	assert.InDelta(t, time.Hour.Seconds(), reporter2.waits[0].Seconds(), 2)
}

type waitRecorder struct {
	nopReporter
	waits  []time.Duration
	onWait func()
}

func (w *waitRecorder) RateLimited(_ IterationInfo, d time.Duration) {
	w.waits = append(w.waits, d)
	w.onWait()
}

// A run killed after its first log line and before its first checkpoint
// leaves the previous run's state.json beside its own log; --resume goes on
// with the run in the log, not the finished run in the checkpoint.
func TestResumeRunKilledBeforeItsFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, happy(), settings()).Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonCompleted, out.Reason)
	statePath := runfiles.In(dir).State()
	finished, err := os.ReadFile(statePath)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	b := &fakeBackend{byHat: map[string][]turn{"ralph": {{block: true, onStart: cancel}}}}
	_, err = newTestEngine(t, dir, b, settings(), func(o *Options) { o.Start = runfiles.StartFresh }).Run(ctx)
	require.NoError(t, err)
	second, _, err := runfiles.Checkpoint{Path: statePath}.Load()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(statePath, finished, 0o644))

	w := &warnRecorder{}
	b2 := happy()
	out, err = newTestEngine(t, dir, b2, settings(), func(o *Options) { o.Start = runfiles.StartResume; o.Reporter = w }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, second.RunID, out.RunID)
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, b2.hats)
	require.NotEmpty(t, w.warnings)
	assert.Contains(t, w.warnings[0], "rebuilding run "+second.RunID)
}

type warnRecorder struct {
	nopReporter
	warnings []string
}

func (w *warnRecorder) Warn(msg string) { w.warnings = append(w.warnings, msg) }

// A ralph killed after appending loop.terminate and before the checkpoint
// that records it: the log says the run ended, and it did.
func TestRunEndedInTheLogButNotInTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, happy(), settings()).Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonCompleted, out.Reason)

	cp := runfiles.Checkpoint{Path: runfiles.In(dir).State()}
	st, _, err := cp.Load()
	require.NoError(t, err)
	recs := readLog(t, dir)
	terminate := recs[len(recs)-1]
	require.Equal(t, runfiles.TopicLoopTerminate, terminate.Event.Topic)
	st.Terminated, st.Offset = nil, terminate.Offset
	require.NoError(t, cp.Save(st, runfiles.PhaseTerminating, time.Now()))

	before := len(readLog(t, dir))
	resumed, err := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err, "a resume of a run that ended says how it ended")
	assert.True(t, resumed.AlreadyEnded)
	assert.Equal(t, runfiles.ReasonCompleted, resumed.Reason)
	assert.Equal(t, st.RunID, resumed.RunID)
	assert.Equal(t, terminate.Event.TS, resumed.EndedAt.UTC())
	assert.Len(t, readLog(t, dir), before, "and writes nothing")

	out, err = newTestEngine(t, dir, happy(), settings()).Run(t.Context())
	require.NoError(t, err, "a new run starts: the previous one is not unfinished")
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.NotEqual(t, st.RunID, out.RunID)
}

// crashed stands for a SIGKILL: a backend panics with it, and the engine
// dies without writing another line, as a killed ralph would.
type crashed struct{}

// runUntilCrash runs e and returns once it has died of a crashed panic.
func runUntilCrash(t *testing.T, e *Engine) {
	t.Helper()
	defer func() {
		r := recover()
		require.IsType(t, crashed{}, r, "the run was to die of a simulated crash")
	}()
	_, _ = e.Run(t.Context())
}

// The time ralph was dead is not runtime: a run killed outright ends its
// segment at its last recorded event, as one stopped with Ctrl-C ends it at
// loop.terminate.
func TestRuntimeExcludesTheTimeRalphWasDeadAfterACrash(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := &stepClock{now: t0}
	set := func(d time.Duration) func() {
		return func() {
			clock.mu.Lock()
			defer clock.mu.Unlock()
			clock.now = t0.Add(d)
		}
	}
	s := settings()
	s.MaxRuntime = 12 * time.Second
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph": {{text: tagged("build.task", "build it"), onStart: set(time.Second)}},
		"builder": {{onStart: func() {
			set(1500 * time.Millisecond)()
			panic(crashed{})
		}}},
	}}
	runUntilCrash(t, newTestEngine(t, dir, b, s, func(o *Options) { o.Now = clock.Now }))
	status, err := runfiles.ReadStatus(dir, 0, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, status.Running)
	assert.Equal(t, "1s", status.Elapsed, "status counts a killed run's time as a resume will")

	// Resumed 13 seconds after the kill: one second of runtime was used.
	set(14500 * time.Millisecond)()
	b2 := happy()
	out, err := newTestEngine(t, dir, b2, s, func(o *Options) { o.Now = clock.Now; o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
	assert.Equal(t, []string{"builder", "reviewer"}, b2.hats)
	assert.Equal(t, time.Second, out.Runtime, "from loop.started to the last line before the kill, then no time")

	st, _, err := runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Load()
	require.NoError(t, err)
	rebuilt := runfiles.NewRunState()
	for _, rec := range readLog(t, dir) {
		rebuilt.Apply(rec, twoHats(t))
	}
	assert.Equal(t, time.Second, rebuilt.PriorRuntime, "the log alone gives the same runtime")
	assert.Equal(t, st.PriorRuntime, rebuilt.PriorRuntime)
}

// A log truncated after the checkpoint was written (restored from a
// backup, cut by a tool) leaves state.json claiming lines the log no
// longer has. The checkpoint cannot be trusted: the resume moves it aside,
// saying so, rebuilds the run from the log as it is, and goes on from
// there, deciding each event once and numbering iterations on from the
// log's.
// killedWhileTheReviewerRuns runs the two-hat path in dir until the
// reviewer starts, and returns the checkpoint then and the reviewer's
// iteration.started, the log's last line.
func killedWhileTheReviewerRuns(t *testing.T, dir string) (*runfiles.RunState, events.Record) {
	t.Helper()
	b := happy()
	b.byHat["reviewer"] = []turn{{onStart: func() { panic(crashed{}) }}}
	runUntilCrash(t, newTestEngine(t, dir, b, settings()))
	saved, _, err := runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Load()
	require.NoError(t, err)
	require.NotNil(t, saved.Running, "killed while the reviewer ran")
	recs := readLog(t, dir)
	reviewerStart := recs[len(recs)-1]
	require.Equal(t, runfiles.TopicIterationStarted, reviewerStart.Event.Topic)
	require.Equal(t, reviewerStart.End(), saved.Offset, "the checkpoint was written before the reviewer started")
	return saved, reviewerStart
}

func TestResumeRebuildsWhenTheLogIsShorterThanTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	saved, reviewerStart := killedWhileTheReviewerRuns(t, dir)

	// The log loses the reviewer's iteration.started: the checkpoint's
	// offset is now past its end.
	logPath := filepath.Join(dir, saved.EventsFile)
	require.NoError(t, os.Truncate(logPath, reviewerStart.Offset))

	w := &warnRecorder{}
	b2 := happy()
	out, err := newTestEngine(t, dir, b2, settings(), func(o *Options) { o.Start = runfiles.StartResume; o.Reporter = w }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
	assert.Equal(t, saved.RunID, out.RunID, "the same run goes on")
	assert.Equal(t, []string{"reviewer"}, b2.hats, "the build.done the builder published is the reviewer's, as the log says")

	require.NotEmpty(t, w.warnings)
	warning := w.warnings[0]
	assert.Contains(t, warning, runfiles.StateFile)
	assert.Contains(t, warning, strconv.FormatInt(saved.Offset, 10), "the offset it claimed")
	assert.Contains(t, warning, strconv.FormatInt(reviewerStart.Offset, 10)+" bytes", "the log's size")
	aside, err := filepath.Glob(filepath.Join(dir, runfiles.DirName, "state.corrupt.*.json"))
	require.NoError(t, err)
	require.Len(t, aside, 1, "the checkpoint was moved aside, not overwritten")
	assert.Contains(t, warning, aside[0])

	// Nothing lost, nothing twice: every event decided once, iterations
	// numbered 1, 2, 3 with no trace of the cut one, and the checkpoint is
	// the fold of the log.
	recs := readLog(t, dir)
	for _, r := range recs {
		require.NoError(t, r.Err, "line at %d", r.Offset)
	}
	for _, topic := range []string{"build.task", "build.done", "LOOP_COMPLETE"} {
		assert.Equal(t, 1, countDecisions(recs, topic), "decisions about %s", topic)
	}
	var started []int
	for _, r := range recs {
		if r.Event.Topic == runfiles.TopicIterationStarted {
			var p runfiles.IterationStartedRecord
			require.NoError(t, json.Unmarshal(r.Event.Payload, &p))
			started = append(started, p.Iteration)
		}
	}
	assert.Equal(t, []int{1, 2, 3}, started)
	assert.Equal(t, 0, countInterrupted(recs), "no iteration recorded as interrupted: the log never had the cut one")
	final, _, err := runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Load()
	require.NoError(t, err)
	rebuilt := runfiles.NewRunState()
	rebuilt.EventsFile = final.EventsFile
	for _, rec := range recs {
		rebuilt.Apply(rec, twoHats(t))
	}
	assert.Equal(t, jsonOf(t, final), jsonOf(t, rebuilt))
}

// countInterrupted counts iteration.finished lines with the interrupted
// outcome.
func countInterrupted(recs []events.Record) int {
	n := 0
	for _, r := range recs {
		if r.Event.Topic == runfiles.TopicIterationFinished && strings.Contains(string(r.Event.Payload), `"outcome":"`+string(runfiles.OutcomeInterrupted)+`"`) {
			n++
		}
	}
	return n
}

// A log replaced by one that runs past the checkpoint's offset but has no
// line starting there is no more the checkpoint's log than a shorter one:
// the resume rebuilds from it too, and decides the line that spans the
// offset once.
func TestResumeRebuildsWhenTheCheckpointOffsetIsMidLine(t *testing.T) {
	dir := t.TempDir()
	saved, reviewerStart := killedWhileTheReviewerRuns(t, dir)

	// In place of the reviewer's iteration.started, a longer line of the
	// builder's, so that the checkpoint's offset falls inside it.
	logPath := filepath.Join(dir, saved.EventsFile)
	require.NoError(t, os.Truncate(logPath, reviewerStart.Offset))
	note := events.Event{Topic: "build.note", Source: events.SourceAgent, Hat: "builder", Iteration: 2,
		Payload: events.StringPayload(strings.Repeat("n", int(saved.Offset-reviewerStart.Offset)))}
	require.NoError(t, events.AppendTo(logPath, note))

	w := &warnRecorder{}
	out, err := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Start = runfiles.StartResume; o.Reporter = w }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
	require.NotEmpty(t, w.warnings)
	assert.Contains(t, w.warnings[0], "has no line starting there")
	recs := readLog(t, dir)
	assert.Equal(t, 1, countDecisions(recs, "build.note"), "the line spanning the offset is decided once")
	assert.Equal(t, 1, countDecisions(recs, "build.done"))
}

// A person's guidance goes to the next iteration whatever its hat, once,
// and does not fall with the events of a hat that has used up its
// activations.
func TestGuidanceFloatsToTheNextHat(t *testing.T) {
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "builder", Triggers: []string{"build.task"}, MaxActivations: 1},
	})
	require.NoError(t, err)
	guidance := func(text string) string {
		line, err := events.EncodeLine(events.Event{TS: time.Now(), Topic: hats.GuidanceTopic, Payload: events.StringPayload(text), Source: events.SourceHuman})
		require.NoError(t, err)
		return strings.TrimSuffix(string(line), "\n")
	}
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph": {{raw: []string{guidance("first: to the builder")}, text: tagged("build.task", "1")},
			{raw: []string{guidance("second: past the exhausted builder")}, text: tagged("build.task", "2")},
			{text: tagged("LOOP_COMPLETE", "stop")}},
		"builder": {{}},
	}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Hats = reg }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	require.Equal(t, []string{"ralph", "builder", "ralph", "ralph"}, b.hats)
	assert.Contains(t, b.prompts[1], "first: to the builder", "the builder runs next and carries it")
	assert.Contains(t, b.prompts[3], "second: past the exhausted builder", "the coordinator runs next and carries it")
	for i, p := range b.prompts {
		assert.Equal(t, i == 1, strings.Contains(p, "first: to the builder"), "prompt %d", i)
		assert.Equal(t, i == 3, strings.Contains(p, "second: past the exhausted builder"), "prompt %d", i)
	}
}

package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// named is a fake backend with a name of its own, for chains.
type named struct {
	*fakeBackend
	name string
}

func (n named) Name() string { return n.name }

// jumpClock is the engine's clock; jump moves it on by d at once, as an
// hour passing while an agent works.
type jumpClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) jump(d time.Duration) func() {
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.now = c.now.Add(d)
	}
}

func limitedFor(clock *jumpClock, d time.Duration) events.AgentResult {
	return events.AgentResult{ExitCode: 1, Failure: events.FailureRateLimit, FailureMessage: "usage limit reached",
		RateLimitResetAt: clock.Now().Add(d)}
}

// withChain runs the default hat chain primary → fallbacks on the clock.
func withChain(clock *jumpClock, fallbacks ...Backend) func(*Options) {
	return func(o *Options) {
		o.Now = clock.Now
		o.Fallback = map[string]Fallback{"": {Backends: fallbacks, After: 10 * time.Minute}}
	}
}

func switches(t *testing.T, dir string) []runfiles.BackendSwitchedRecord {
	t.Helper()
	var out []runfiles.BackendSwitchedRecord
	for _, r := range readLog(t, dir) {
		if r.Err == nil && r.Event.Topic == runfiles.TopicBackendSwitched {
			var s runfiles.BackendSwitchedRecord
			runfiles.Decode(r.Event, &s)
			out = append(out, s)
		}
	}
	return out
}

func newClock() *jumpClock {
	return &jumpClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func TestFallbackOnAFarRateLimitRunsTheSameIterationOnTheNextBackend(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	primary := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, time.Hour)}}}, "claude"}
	codex := named{happy(), "codex"}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex)).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 3, out.Iterations, "the limited attempt is not an iteration of its own")
	assert.Equal(t, []string{"ralph"}, primary.hats)
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, codex.hats)
	assert.Equal(t, primary.prompts[0], codex.prompts[0], "the same iteration, with the same prompt")
	sw := switches(t, dir)
	require.Len(t, sw, 1)
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 1, Hat: "ralph", From: "claude", To: "codex",
		Reason: runfiles.SwitchRateLimit, ResetAt: "2026-11-22T11:00:00Z", Message: "usage limit reached"}, sw[0])
	assert.Zero(t, countTopic(readLog(t, dir), runfiles.TopicRateLimited), "a switch is not a wait")
}

func TestFallbackWaitsForANearRateLimit(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	ctx, cancel := context.WithCancel(t.Context())
	primary := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, 5*time.Minute)}}}, "claude"}
	codex := named{happy(), "codex"}
	reporter := &waitRecorder{onWait: cancel}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex),
		func(o *Options) { o.Reporter = reporter }).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason, "interrupted during the wait")
	require.Len(t, reporter.waits, 1)
	assert.InDelta(t, (5 * time.Minute).Seconds(), reporter.waits[0].Seconds(), 2)
	assert.Empty(t, codex.hats, "a limit that lifts within fallback_after is waited for")
	assert.Empty(t, switches(t, dir))
}

func TestFallbackOnProviderFailures(t *testing.T) {
	cases := []struct {
		name   string
		turn   turn
		reason runfiles.SwitchReason
		reset  string
	}{
		{name: "expired credentials", reason: runfiles.SwitchAuth,
			turn: turn{result: events.AgentResult{ExitCode: 1, Failure: events.FailureAuth, FailureMessage: "OAuth token has expired"}}},
		{name: "an overloaded service", reason: runfiles.SwitchOverloaded, reset: "2026-11-22T10:10:00Z",
			turn: turn{result: events.AgentResult{ExitCode: 1, Failure: events.FailureProvider, FailureMessage: "API Error: 529 overloaded"}}},
		{name: "a CLI that cannot run", reason: runfiles.SwitchUnavailable,
			turn: turn{err: errors.New(`claude backend: executable "claude" not found`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, clock := t.TempDir(), newClock()
			primary := named{&fakeBackend{turns: []turn{tc.turn}}, "claude"}
			codex := named{happy(), "codex"}
			out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex)).Run(t.Context())
			require.NoError(t, err, "not fatal while the chain has a backend to go on with")
			assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
			assert.Equal(t, 3, out.Iterations)
			assert.Equal(t, []string{"ralph"}, primary.hats, "the primary is not tried again in this run")
			sw := switches(t, dir)
			require.Len(t, sw, 1)
			assert.Equal(t, tc.reason, sw[0].Reason)
			assert.Equal(t, tc.reset, sw[0].ResetAt)
			assert.Equal(t, "codex", sw[0].To)
		})
	}
}

func TestFallbackWhenEveryBackendIsLimitedWaitsForTheEarliestReset(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	ctx, cancel := context.WithCancel(t.Context())
	primary := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, time.Hour)}}}, "claude"}
	codex := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, 3*time.Hour)}}}, "codex"}
	reporter := &waitRecorder{onWait: cancel}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex),
		func(o *Options) { o.Reporter = reporter }).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason)
	require.Len(t, reporter.waits, 1)
	assert.InDelta(t, time.Hour.Seconds(), reporter.waits[0].Seconds(), 2, "the primary's reset comes first")
	require.Len(t, switches(t, dir), 1)
}

func TestFallbackGoesBackToThePrimaryOnceItsResetPassed(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	primary := named{&fakeBackend{byHat: map[string][]turn{
		"ralph":    {{result: limitedFor(clock, time.Hour)}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}}},
		"reviewer": {{text: tagged("LOOP_COMPLETE", "done")}},
	}}, "claude"}
	// The coordinator's work on the fallback takes two hours.
	codex := named{&fakeBackend{turns: []turn{{text: tagged("build.task", "build it"), onStart: clock.jump(2 * time.Hour)}}}, "codex"}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex)).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, primary.hats)
	assert.Equal(t, []string{"ralph"}, codex.hats)
	sw := switches(t, dir)
	require.Len(t, sw, 2)
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 2, Hat: "builder", From: "codex", To: "claude",
		Reason: runfiles.SwitchRecovered}, sw[1])

	st := foldLog(t, dir)
	require.Contains(t, st.ByBackend, "codex")
	require.Contains(t, st.ByBackend, "claude")
	assert.Equal(t, 1, st.ByBackend["codex"].Iterations)
	assert.Equal(t, 2, st.ByBackend["claude"].Iterations)
}

// The log says which backend is current and when the primary comes back,
// so a resumed run goes on where it was without asking the primary again.
func TestFallbackResumeKnowsThePrimaryIsLimited(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	ctx, cancel := context.WithCancel(t.Context())
	primary := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, time.Hour)}}}, "claude"}
	codex := named{&fakeBackend{turns: []turn{{block: true, onStart: cancel}}}, "codex"}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex)).Run(ctx)
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonInterrupted, out.Reason)

	primary2, codex2 := named{happy(), "claude"}, named{happy(), "codex"}
	out, err = newTestEngine(t, dir, primary2, settings(), withChain(clock, codex2),
		func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Empty(t, primary2.hats, "the primary's reset has not passed")
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, codex2.hats)
}

// An auth failure keeps the primary out for the rest of the run, and a
// resume (a person logged in) tries it again.
func TestFallbackResumeRetriesAPrimaryThatFailedToAuthenticate(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	ctx, cancel := context.WithCancel(t.Context())
	auth := events.AgentResult{ExitCode: 1, Failure: events.FailureAuth, FailureMessage: "not logged in"}
	primary := named{&fakeBackend{turns: []turn{{result: auth}}}, "claude"}
	codex := named{&fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("build.task", "build it")}},
		"builder": {{block: true, onStart: cancel}},
	}}, "codex"}
	_, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex)).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"ralph"}, primary.hats)

	primary2, codex2 := named{happy(), "claude"}, named{happy(), "codex"}
	out, err := newTestEngine(t, dir, primary2, settings(), withChain(clock, codex2),
		func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"builder", "reviewer"}, primary2.hats)
	assert.Empty(t, codex2.hats)
}

func foldLog(t *testing.T, dir string) *runfiles.RunState {
	t.Helper()
	st := runfiles.NewRunState()
	for _, r := range readLog(t, dir) {
		st.Apply(r, twoHats(t))
	}
	return st
}

// The primary is limited for an hour and the fallback's credentials are
// refused: no backend is left, so the run waits for the primary's reset
// rather than ending.
func TestFallbackWithNoBackendLeftWaitsForTheFirstToComeBack(t *testing.T) {
	dir, clock := t.TempDir(), newClock()
	ctx, cancel := context.WithCancel(t.Context())
	primary := named{&fakeBackend{turns: []turn{{result: limitedFor(clock, time.Hour)}}}, "claude"}
	auth := events.AgentResult{ExitCode: 1, Failure: events.FailureAuth, FailureMessage: "not logged in"}
	codex := named{&fakeBackend{turns: []turn{{result: auth}}}, "codex"}
	reporter := &waitRecorder{onWait: cancel}
	out, err := newTestEngine(t, dir, primary, settings(), withChain(clock, codex),
		func(o *Options) { o.Reporter = reporter }).Run(ctx)
	require.NoError(t, err, "not fatal: claude comes back")
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason, "interrupted during the wait")
	require.Len(t, reporter.waits, 1)
	assert.InDelta(t, time.Hour.Seconds(), reporter.waits[0].Seconds(), 2)
	sw := switches(t, dir)
	require.Len(t, sw, 2)
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 1, Hat: "ralph", From: "codex", To: "claude",
		Reason: runfiles.SwitchAuth, Message: "not logged in"}, sw[1])

	// Two hours later the run goes on, on claude.
	clock.jump(2 * time.Hour)()
	primary2, codex2 := named{happy(), "claude"}, named{happy(), "codex"}
	out, err = newTestEngine(t, dir, primary2, settings(), withChain(clock, codex2),
		func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "reviewer"}, primary2.hats)
	assert.Empty(t, codex2.hats)
}

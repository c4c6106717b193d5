package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

var paceT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func spentAt(minutes int, tokens int64, cost float64) runfiles.Spent {
	return runfiles.Spent{At: paceT0.Add(time.Duration(minutes) * time.Minute), Tokens: tokens, CostUSD: cost}
}

func TestPaceWait(t *testing.T) {
	cases := []struct {
		name   string
		pacing Pacing
		spent  []runfiles.Spent
		now    time.Duration // after paceT0
		want   *runfiles.PacedRecord
	}{
		{name: "no budget paces nothing", spent: []runfiles.Spent{spentAt(0, 5000, 0)}, now: time.Minute},
		{name: "an empty window never waits", pacing: Pacing{TokensPerHour: 1000}, now: time.Minute},
		{name: "the next iteration fits exactly", pacing: Pacing{TokensPerHour: 1000},
			spent: []runfiles.Spent{spentAt(0, 500, 0)}, now: time.Minute},
		{name: "used plus the estimate over the budget waits for the oldest to age out",
			pacing: Pacing{TokensPerHour: 1000},
			spent:  []runfiles.Spent{spentAt(0, 400, 0), spentAt(10, 400, 0)}, now: 20 * time.Minute,
			want: &runfiles.PacedRecord{Window: "tokens_per_hour", Used: 800, Budget: 1000, Estimate: 400,
				Until: paceT0.Add(time.Hour), WaitMS: (40 * time.Minute).Milliseconds()}},
		{name: "as many aged out as it takes",
			pacing: Pacing{TokensPerHour: 1000},
			spent:  []runfiles.Spent{spentAt(0, 400, 0), spentAt(5, 400, 0), spentAt(10, 400, 0)}, now: 20 * time.Minute,
			want: &runfiles.PacedRecord{Window: "tokens_per_hour", Used: 1200, Budget: 1000, Estimate: 400,
				Until: paceT0.Add(65 * time.Minute), WaitMS: (45 * time.Minute).Milliseconds()}},
		{name: "what aged out of the window is not counted",
			pacing: Pacing{TokensPerHour: 1000},
			spent:  []runfiles.Spent{spentAt(0, 900, 0), spentAt(70, 100, 0)}, now: 75 * time.Minute},
		{name: "the estimate is the mean of the last three iterations",
			pacing: Pacing{TokensPerHour: 1000},
			spent:  []runfiles.Spent{spentAt(0, 100, 0), spentAt(1, 100, 0), spentAt(2, 100, 0), spentAt(3, 700, 0)}, now: 4 * time.Minute,
			want: &runfiles.PacedRecord{Window: "tokens_per_hour", Used: 1000, Budget: 1000, Estimate: 300,
				Until: paceT0.Add(62 * time.Minute), WaitMS: (58 * time.Minute).Milliseconds()}},
		{name: "an iteration larger than the whole budget waits for an empty window",
			pacing: Pacing{TokensPerHour: 500},
			spent:  []runfiles.Spent{spentAt(0, 600, 0), spentAt(30, 600, 0)}, now: 31 * time.Minute,
			want: &runfiles.PacedRecord{Window: "tokens_per_hour", Used: 1200, Budget: 500, Estimate: 600,
				Until: paceT0.Add(90 * time.Minute), WaitMS: (59 * time.Minute).Milliseconds(), Oversize: true}},
		{name: "the day window",
			pacing: Pacing{CostPerDay: 1},
			spent:  []runfiles.Spent{spentAt(0, 0, 0.4), spentAt(60, 0, 0.4)}, now: 120 * time.Minute,
			want: &runfiles.PacedRecord{Window: "cost_per_day", Used: 0.8, Budget: 1, Estimate: 0.4,
				Until: paceT0.Add(24 * time.Hour), WaitMS: (22 * time.Hour).Milliseconds()}},
		{name: "of two windows the one that ends later",
			pacing: Pacing{TokensPerHour: 1000, CostPerHour: 0.6},
			spent:  []runfiles.Spent{spentAt(0, 600, 0.1), spentAt(10, 100, 0.6)}, now: 20 * time.Minute,
			want: &runfiles.PacedRecord{Window: "cost_per_hour", Used: 0.7, Budget: 0.6, Estimate: 0.35,
				Until: paceT0.Add(70 * time.Minute), WaitMS: (50 * time.Minute).Milliseconds()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := paceWait(tc.pacing, tc.spent, paceT0.Add(tc.now))
			if tc.want == nil {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tc.want.Window, got.Window)
			assert.InDelta(t, tc.want.Used, got.Used, 1e-9)
			assert.InDelta(t, tc.want.Estimate, got.Estimate, 1e-9)
			assert.InDelta(t, tc.want.Budget, got.Budget, 1e-9)
			assert.Equal(t, tc.want.Until, got.Until)
			assert.Equal(t, tc.want.WaitMS, got.WaitMS)
			assert.Equal(t, tc.want.Oversize, got.Oversize)
		})
	}
}

// paceClock is a clock that moves a minute each time an agent runs, and
// whose Sleep moves it by the time slept, at once.
type paceClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *paceClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *paceClock) advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Minute)
}

func (c *paceClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

// spending is happy's path with every iteration using tokens and taking a
// minute of clock.
func spending(clock *paceClock, tokens int64) *fakeBackend {
	res := events.AgentResult{Usage: events.Usage{InputTokens: tokens}}
	return &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build it"), result: res, onStart: clock.advance}},
		"builder":  {{emit: []events.Event{ev("build.done", "tests: pass")}, result: res, onStart: clock.advance}},
		"reviewer": {{text: "Approved. " + tagged("LOOP_COMPLETE", "done"), result: res, onStart: clock.advance}},
	}}
}

func pacedRecords(t *testing.T, recs []events.Record) []runfiles.PacedRecord {
	t.Helper()
	var out []runfiles.PacedRecord
	for _, r := range recs {
		if r.Err == nil && r.Event.Topic == runfiles.TopicLoopPaced {
			var p runfiles.PacedRecord
			require.True(t, runfiles.Decode(r.Event, &p))
			out = append(out, p)
		}
	}
	return out
}

// startedAt are the times of the iteration.started lines, by iteration.
func startedAt(recs []events.Record) map[int]time.Time {
	out := map[int]time.Time{}
	for _, r := range recs {
		if r.Err == nil && r.Event.Topic == runfiles.TopicIterationStarted {
			var s runfiles.IterationStartedRecord
			runfiles.Decode(r.Event, &s)
			out[s.Iteration] = r.Event.TS
		}
	}
	return out
}

func TestPacingWaitsThenGoesOn(t *testing.T) {
	dir := t.TempDir()
	clock := &paceClock{now: paceT0}
	s := settings()
	s.Pacing = Pacing{TokensPerHour: 1000}
	rep := &paceRecorder{}
	out, err := newTestEngine(t, dir, spending(clock, 600), s, func(o *Options) {
		o.Now, o.Sleep, o.Reporter = clock.Now, clock.Sleep, rep
	}).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, 3, out.Iterations)

	// Each iteration used 600 of 1000 an hour: the next one waits until
	// the last has aged out, an hour after it finished.
	assert.Equal(t, []time.Duration{time.Hour, time.Hour}, clock.sleeps)
	recs := readLog(t, dir)
	paced := pacedRecords(t, recs)
	require.Len(t, paced, 2)
	started := startedAt(recs)
	for i, p := range paced {
		assert.Equal(t, "tokens_per_hour", p.Window)
		assert.InDelta(t, 600, p.Used, 0)
		assert.InDelta(t, 1000, p.Budget, 0)
		assert.Equal(t, time.Hour.Milliseconds(), p.WaitMS)
		assert.False(t, started[i+2].Before(p.Until), "iteration %d started at %s, before the wait's end %s", i+2, started[i+2], p.Until)
	}
	assert.Len(t, rep.paced, 2, "the reporter is told of each wait")
}

type paceRecorder struct {
	nopReporter
	paced   []runfiles.PacedRecord
	onPaced func()
}

func (p *paceRecorder) Paced(r runfiles.PacedRecord) {
	p.paced = append(p.paced, r)
	if p.onPaced != nil {
		p.onPaced()
	}
}

func TestInterruptWhilePacedEndsTheRunAsInterrupted(t *testing.T) {
	dir := t.TempDir()
	clock := &paceClock{now: paceT0}
	s := settings()
	s.Pacing = Pacing{TokensPerHour: 1000}
	ctx, cancel := context.WithCancel(t.Context())
	// The real timer: an hour, unless the signal ends the wait.
	rep := &paceRecorder{onPaced: cancel}
	out, err := newTestEngine(t, dir, spending(clock, 600), s, func(o *Options) {
		o.Now, o.Reporter = clock.Now, rep
	}).Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonInterrupted, out.Reason)
	assert.Equal(t, exitcode.Interrupted, out.ExitCode)
	assert.Contains(t, out.Message, "interrupted while paced (tokens_per_hour: 600/1000")
	assert.Equal(t, 1, out.Iterations)
}

func TestStopRequestWhilePacedStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	clock := &paceClock{now: paceT0}
	s := settings()
	s.Pacing = Pacing{TokensPerHour: 1000}
	rep := &paceRecorder{onPaced: func() { require.NoError(t, runfiles.RequestStop(dir, runfiles.StopAtBoundary)) }}
	out, err := newTestEngine(t, dir, spending(clock, 600), s, func(o *Options) {
		o.Now, o.Reporter = clock.Now, rep
	}).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonStopped, out.Reason)
	assert.Equal(t, 1, out.Iterations)
}

func TestResumeFoldsThePacingWindows(t *testing.T) {
	dir := t.TempDir()
	clock := &paceClock{now: paceT0}
	s := settings()
	s.Pacing = Pacing{TokensPerHour: 1000}
	ctx, cancel := context.WithCancel(t.Context())
	out, err := newTestEngine(t, dir, spending(clock, 600), s, func(o *Options) {
		o.Now, o.Reporter = clock.Now, &paceRecorder{onPaced: cancel}
	}).Run(ctx)
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonInterrupted, out.Reason)
	first := pacedRecords(t, readLog(t, dir))
	require.Len(t, first, 1)

	// Resumed ten minutes later, inside the window: it waits again, for
	// the same moment, before any agent runs.
	clock.now = clock.now.Add(10 * time.Minute)
	b := spending(clock, 600)
	var hatsBeforeWait []string
	sleep := func(ctx context.Context, d time.Duration) error {
		if len(clock.sleeps) == 0 {
			hatsBeforeWait = append([]string{}, b.hats...)
		}
		return clock.Sleep(ctx, d)
	}
	s.MaxIterations = 2
	out, err = newTestEngine(t, dir, b, s, func(o *Options) {
		o.Now, o.Sleep, o.Start = clock.Now, sleep, runfiles.StartResume
	}).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxIterations, out.Reason)
	assert.Empty(t, hatsBeforeWait, "no agent ran before the resumed run's wait")
	require.NotEmpty(t, clock.sleeps)
	assert.Equal(t, 50*time.Minute, clock.sleeps[0], "the window folded from the log: an hour after the first iteration")
	paced := pacedRecords(t, readLog(t, dir))
	require.Len(t, paced, 2)
	assert.Equal(t, first[0].Until, paced[1].Until)
}

func TestPacingWaitEndsAtMaxRuntime(t *testing.T) {
	dir := t.TempDir()
	clock := &paceClock{now: paceT0}
	s := settings()
	s.Pacing = Pacing{TokensPerHour: 1000}
	s.MaxRuntime = 30 * time.Minute
	out, err := newTestEngine(t, dir, spending(clock, 600), s, func(o *Options) {
		o.Now, o.Sleep = clock.Now, clock.Sleep
	}).Run(t.Context())
	require.NoError(t, err)
	// The budget asks for an hour; the run has less than 30 minutes left,
	// so it sleeps only that long and ends on max_runtime_seconds.
	assert.Equal(t, runfiles.ReasonMaxRuntime, out.Reason)
	assert.Equal(t, 1, out.Iterations)
	require.Len(t, clock.sleeps, 1)
	assert.LessOrEqual(t, clock.sleeps[0], 30*time.Minute)
	assert.Positive(t, clock.sleeps[0])
}

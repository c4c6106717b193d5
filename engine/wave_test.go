package engine

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/runfiles"
)

// waveBackend plays a dispatcher that starts a wave of n events, workers
// that each publish one result, and a synthesizer that completes the run.
// It records how many workers ran at once, and what each hat was told.
type waveBackend struct {
	n int
	// barrier, when set, holds each worker until that many run at once,
	// which proves the wave runs them in parallel without a sleep.
	barrier int
	// fail makes the worker of that index fail; block makes it wait for
	// its context to end.
	fail, block map[int]bool
	// limit makes the worker of that index hit a usage limit that resets
	// in an hour.
	limit map[int]bool
	name  string
	// onStart, when set, is called as each worker starts.
	onStart func()

	mu        sync.Mutex
	active    int
	maxActive int
	started   int
	allIn     chan struct{}
	prompts   map[string][]string
	workerEnv []map[string]string
}

func (b *waveBackend) Name() string { return cmp.Or(b.name, "fake") }

func (b *waveBackend) Run(ctx context.Context, run events.AgentRun, _ func(events.Activity)) (events.AgentResult, error) {
	hat := envOf(run.Env, "RALPH_HAT")
	n, _ := strconv.Atoi(envOf(run.Env, "RALPH_ITERATION"))
	b.mu.Lock()
	if b.prompts == nil {
		b.prompts, b.allIn = map[string][]string{}, make(chan struct{})
	}
	b.prompts[hat] = append(b.prompts[hat], run.Prompt)
	b.mu.Unlock()
	logPath := envOf(run.Env, "RALPH_EVENTS_FILE")
	switch hat {
	case "dispatcher":
		for i := range b.n {
			ev := events.Event{Topic: "review.perspective", Payload: events.StringPayload(fmt.Sprintf("area %d", i)),
				Source: events.SourceAgent, Hat: hat, Iteration: n, Wave: &events.Wave{WaveID: "w-1", WaveIndex: i, WaveTotal: b.n}}
			if err := events.AppendTo(logPath, ev); err != nil {
				return events.AgentResult{}, err
			}
		}
		return events.AgentResult{Duration: time.Millisecond}, nil
	case "reviewer":
		return b.worker(ctx, run, hat, n, logPath)
	}
	return events.AgentResult{FinalText: tagged("LOOP_COMPLETE", "report written"), Duration: time.Millisecond}, nil
}

func (b *waveBackend) worker(ctx context.Context, run events.AgentRun, hat string, n int, logPath string) (events.AgentResult, error) {
	i, _ := strconv.Atoi(envOf(run.Env, "RALPH_WAVE_INDEX"))
	if b.onStart != nil {
		b.onStart()
	}
	b.mu.Lock()
	b.workerEnv = append(b.workerEnv, map[string]string{"RALPH_WAVE_WORKER": envOf(run.Env, "RALPH_WAVE_WORKER"),
		"RALPH_WAVE_ID": envOf(run.Env, "RALPH_WAVE_ID"), "RALPH_EVENTS_FILE": logPath})
	b.active++
	b.started++
	b.maxActive = max(b.maxActive, b.active)
	if b.started == b.barrier {
		close(b.allIn)
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.active--
		b.mu.Unlock()
	}()
	if b.barrier > 0 {
		select {
		case <-b.allIn:
		case <-ctx.Done():
			return events.AgentResult{ExitCode: -1}, ctx.Err()
		}
	}
	if b.block[i] {
		<-ctx.Done()
		return events.AgentResult{ExitCode: -1}, ctx.Err()
	}
	if b.limit[i] {
		// It spent something before the limit stopped it.
		return events.AgentResult{ExitCode: 1, Failure: events.FailureRateLimit, FailureMessage: "usage limit reached",
			RateLimitResetAt: time.Now().Add(time.Hour), CostUSD: 0.05, Usage: events.Usage{InputTokens: 7}}, nil
	}
	if b.fail[i] {
		return events.AgentResult{ExitCode: 1, Failure: events.FailureExit, FailureMessage: "exit status 1", CostUSD: 0.1}, nil
	}
	ev := events.Event{Topic: "review.done", Payload: events.StringPayload(fmt.Sprintf("findings %d", i)),
		Source: events.SourceAgent, Hat: hat, Iteration: n}
	if err := events.AppendTo(logPath, ev); err != nil {
		return events.AgentResult{}, err
	}
	// A second result, as a tag: merged after the emitted one.
	return events.AgentResult{FinalText: tagged("review.note", fmt.Sprintf("note %d", i)), CostUSD: 0.1,
		Usage: events.Usage{InputTokens: 10, OutputTokens: 5}, Duration: time.Millisecond}, nil
}

func waveHats(t testing.TB, aggregate time.Duration) *hats.Registry {
	t.Helper()
	reg, err := hats.NewRegistry([]hats.Hat{
		{ID: "dispatcher", Triggers: []string{"task.start"}, Publishes: []string{"review.perspective"}},
		{ID: "reviewer", Triggers: []string{"review.perspective"}, Publishes: []string{"review.done", "review.note"}, Concurrency: 3},
		{ID: "synthesizer", Triggers: []string{"review.done", "review.note"}, Publishes: []string{"LOOP_COMPLETE"},
			Aggregate: &hats.Aggregate{Mode: hats.AggregateWaitForAll, Timeout: aggregate}},
	}, hats.WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	return reg
}

func runWave(t *testing.T, b *waveBackend, aggregate time.Duration) (Summary, []events.Event, string) {
	t.Helper()
	dir := t.TempDir()
	e := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Hats = waveHats(t, aggregate) })
	sum, err := e.Run(t.Context())
	require.NoError(t, err)
	return sum, readWaveLog(t, dir), dir
}

func readWaveLog(t *testing.T, dir string) []events.Event {
	t.Helper()
	rel, err := os.ReadFile(filepath.Join(dir, ".ralph", runfiles.CurrentEventsFile))
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, strings.TrimSpace(string(rel))))
	require.NoError(t, err)
	defer f.Close()
	var out []events.Event
	require.NoError(t, events.Scan(f, func(r events.Record) error {
		require.NoError(t, r.Err)
		out = append(out, r.Event)
		return nil
	}))
	return out
}

func topics(evs []events.Event, keep func(events.Event) bool) []string {
	var out []string
	for _, ev := range evs {
		if keep(ev) {
			out = append(out, ev.Topic+" "+ev.PayloadText())
		}
	}
	return out
}

func TestWaveRunsWorkersInParallelAndMergesInOrder(t *testing.T) {
	b := &waveBackend{n: 3, barrier: 3}
	sum, log, _ := runWave(t, b, 0)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason)
	assert.Equal(t, 3, b.maxActive, "the three workers ran at once")
	assert.Equal(t, 3, sum.Iterations, "the wave is one iteration")
	require.Len(t, b.prompts["synthesizer"], 1, "the aggregator runs once")
	for i := range 3 {
		assert.Contains(t, b.prompts["synthesizer"][0], fmt.Sprintf("findings %d", i))
		assert.Contains(t, b.prompts["reviewer"][i], "worker")
	}
	// Each worker saw its one event, its own file, and that it is a worker.
	files := map[string]bool{}
	for _, env := range b.workerEnv {
		assert.Equal(t, "1", env["RALPH_WAVE_WORKER"])
		assert.Equal(t, "w-1", env["RALPH_WAVE_ID"])
		files[env["RALPH_EVENTS_FILE"]] = true
	}
	assert.Len(t, files, 3)
	for _, p := range b.prompts["reviewer"] {
		assert.Equal(t, 1, strings.Count(p, "area "), "one event per worker")
		assert.Contains(t, p, "Do not start waves")
	}
	merged := topics(log, func(ev events.Event) bool { return ev.Hat == "reviewer" && ev.Published() })
	assert.Equal(t, []string{"review.done findings 0", "review.note note 0", "review.done findings 1", "review.note note 1",
		"review.done findings 2", "review.note note 2"}, merged, "worker order, then each worker's order")
	for _, ev := range log {
		if ev.Hat == "reviewer" && ev.Published() {
			require.NotNil(t, ev.Wave)
			assert.Equal(t, "w-1", ev.WaveID)
		}
	}
	assert.InDelta(t, 0.3, sum.Cost.USD, 1e-9, "every worker's cost counts")
	assert.Len(t, topics(log, func(ev events.Event) bool { return ev.Topic == runfiles.TopicWaveWorkerFinished }), 3)
	assert.Len(t, topics(log, func(ev events.Event) bool { return ev.Topic == runfiles.TopicWaveFinished }), 1)
}

func TestWaveKeepsToTheHatsConcurrency(t *testing.T) {
	b := &waveBackend{n: 5}
	reg := waveHats(t, 0)
	h, _ := reg.Get("reviewer")
	require.Equal(t, 3, h.Concurrency)
	sum, log, _ := runWave(t, b, 0)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason)
	assert.LessOrEqual(t, b.maxActive, 3)
	assert.Len(t, b.prompts["reviewer"], 5)
	merged := topics(log, func(ev events.Event) bool { return ev.Hat == "reviewer" && ev.Topic == "review.done" })
	assert.Equal(t, []string{"review.done findings 0", "review.done findings 1", "review.done findings 2",
		"review.done findings 3", "review.done findings 4"}, merged)
}

func TestWaveWorkerFailureIsReportedToTheAggregator(t *testing.T) {
	b := &waveBackend{n: 3, fail: map[int]bool{1: true}}
	sum, log, _ := runWave(t, b, 0)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason)
	assert.Len(t, b.prompts["reviewer"], 3, "a failed worker does not run the wave again")
	require.Len(t, b.prompts["synthesizer"], 1)
	assert.Contains(t, b.prompts["synthesizer"][0], "2 of 3 workers have a result. Workers 2 failed.")
	var finished []runfiles.IterationFinishedRecord
	for _, ev := range log {
		if ev.Topic == runfiles.TopicIterationFinished {
			var r runfiles.IterationFinishedRecord
			runfiles.Decode(ev, &r)
			finished = append(finished, r)
		}
	}
	require.Len(t, finished, 3)
	assert.Equal(t, runfiles.OutcomeFailure, finished[1].Outcome, "a worker's failure is the wave's")
	assert.Equal(t, "w-1", finished[1].WaveID)
}

func TestWaveTimeoutCollectsWhatArrived(t *testing.T) {
	b := &waveBackend{n: 3, block: map[int]bool{2: true}}
	sum, log, _ := runWave(t, b, 200*time.Millisecond)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason)
	require.Len(t, b.prompts["synthesizer"], 1)
	assert.Contains(t, b.prompts["synthesizer"][0], "Workers 3 did not finish before the wave's timeout")
	var fin runfiles.WaveFinishedRecord
	for _, ev := range log {
		if ev.Topic == runfiles.TopicWaveFinished {
			runfiles.Decode(ev, &fin)
		}
	}
	assert.Equal(t, []int{0, 1}, fin.Succeeded)
	assert.Equal(t, []int{2}, fin.Missed)
}

func TestWaveOfOnePicksTheSmallestWave(t *testing.T) {
	mk := func(id string, i int) events.Event {
		return events.Event{Topic: "t", Wave: &events.Wave{WaveID: id, WaveIndex: i, WaveTotal: 2}}
	}
	id, offs, evs := waveOf([]int64{10, 20, 30, 40, 50},
		[]events.Event{mk("w-b", 0), mk("w-a", 1), {Topic: "t"}, mk("w-a", 0), mk("w-b", 1)})
	assert.Equal(t, "w-a", id)
	assert.Equal(t, []int64{40, 20}, offs)
	assert.Equal(t, 0, evs[0].WaveIndex)
	id, _, _ = waveOf([]int64{1}, []events.Event{{Topic: "t"}})
	assert.Empty(t, id)
}

// A limit on what the run spends stops a running wave: the workers
// running are stopped, those not started are not run, what arrived is
// merged, and the run ends on the limit rather than go on to the
// collector. Worker 0 ends at once, workers 1 and 2 run until stopped,
// workers 3 and 4 wait for a place (the hat runs three at once).
func TestWaveStopsAtTheRunsLimits(t *testing.T) {
	cases := map[string]struct {
		limit  func(*Settings)
		block  map[int]bool
		reason runfiles.Reason
		done   []int
		hour   bool
	}{
		"max_cost_usd": {limit: func(s *Settings) { s.MaxCostUSD = 0.05 }, block: map[int]bool{1: true, 2: true},
			reason: runfiles.ReasonMaxCost, done: []int{0}},
		"max_tokens": {limit: func(s *Settings) { s.MaxTokens = 10 }, block: map[int]bool{1: true, 2: true},
			reason: runfiles.ReasonBudgetExhausted, done: []int{0}},
		// The run's clock moves on by an hour as the workers start, so
		// the limit has passed whenever the run looks after the wave,
		// and not before it, however slow the machine.
		"max_runtime_seconds": {limit: func(s *Settings) { s.MaxRuntime = 200 * time.Millisecond }, hour: true,
			block: map[int]bool{0: true, 1: true, 2: true}, reason: runfiles.ReasonMaxRuntime, done: []int{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := &waveBackend{n: 5, block: tc.block}
			// From now: the wave's deadline is a time on the wall clock.
			clock := &jumpClock{now: time.Now()}
			if tc.hour {
				b.onStart = sync.OnceFunc(clock.jump(time.Hour))
			}
			s := settings()
			tc.limit(&s)
			dir := t.TempDir()
			sum, err := newTestEngine(t, dir, b, s, func(o *Options) { o.Hats, o.Now = waveHats(t, 0), clock.Now }).Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tc.reason, sum.Reason, sum.Message)
			assert.Equal(t, 2, sum.ExitCode)
			assert.Len(t, b.prompts["reviewer"], 3, "the workers waiting for a place are not started")
			assert.Empty(t, b.prompts["synthesizer"], "the run ends on the limit before the collector")
			log := readWaveLog(t, dir)
			var fin runfiles.WaveFinishedRecord
			var it runfiles.IterationFinishedRecord
			for _, ev := range log {
				switch ev.Topic {
				case runfiles.TopicWaveFinished:
					runfiles.Decode(ev, &fin)
				case runfiles.TopicIterationFinished:
					runfiles.Decode(ev, &it)
				}
			}
			assert.Equal(t, tc.done, fin.Succeeded)
			stopped := []int{}
			for i := range 5 {
				if !slices.Contains(tc.done, i) {
					stopped = append(stopped, i)
				}
			}
			assert.Equal(t, stopped, fin.Stopped)
			assert.Equal(t, tc.reason, fin.Limit)
			assert.Empty(t, fin.Missed)
			assert.Equal(t, "w-1", it.WaveID, "the wave's iteration is the last")
			assert.Contains(t, it.Message, "were stopped when the run reached its "+name+" limit")
			merged := topics(log, func(ev events.Event) bool { return ev.Hat == "reviewer" && ev.Topic == "review.done" })
			assert.Len(t, merged, len(tc.done), "what arrived is merged")
		})
	}
}

// A run a limit ended in the middle of a wave resumes as any run a limit
// ended: at once to the same end unless the limit is raised, and then on
// to the collector, with the wave's stopped workers missing, not run again.
func TestWaveStoppedByALimitResumesOnlyPastIt(t *testing.T) {
	b := &waveBackend{n: 5, block: map[int]bool{1: true, 2: true}}
	s := settings()
	s.MaxCostUSD = 0.05
	dir := t.TempDir()
	resume := func(o *Options) { o.Hats, o.Start = waveHats(t, 0), runfiles.StartResume }
	sum, err := newTestEngine(t, dir, b, s, func(o *Options) { o.Hats = waveHats(t, 0) }).Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonMaxCost, sum.Reason)

	again, err := newTestEngine(t, dir, b, s, resume).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonMaxCost, again.Reason)
	assert.Len(t, b.prompts["reviewer"], 3)
	assert.Empty(t, b.prompts["synthesizer"])

	s.MaxCostUSD = 5
	past, err := newTestEngine(t, dir, b, s, resume).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, past.Reason, past.Message)
	assert.Len(t, b.prompts["reviewer"], 3, "the wave is not run again")
	require.Len(t, b.prompts["synthesizer"], 1)
	assert.Contains(t, b.prompts["synthesizer"][0], "1 of 5 workers have a result. Workers 2, 3, 4, 5 were stopped when the run reached its max_cost_usd limit.")
}

// A worker whose agent hits a far rate limit moves to the next backend of
// the hat's chain, as a plain iteration would, and its result counts;
// without a chain it fails, as before.
func TestWaveWorkerMovesToTheChainsNextBackend(t *testing.T) {
	primary := &waveBackend{n: 3, limit: map[int]bool{1: true}}
	alt := &waveBackend{n: 3, name: "alt"}
	dir := t.TempDir()
	sum, err := newTestEngine(t, dir, primary, settings(), func(o *Options) {
		o.Hats = waveHats(t, 0)
		o.Fallback = map[string]Fallback{"": {Backends: []Backend{alt}, After: 10 * time.Minute}}
	}).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason, sum.Message)
	assert.Len(t, primary.prompts["reviewer"], 3)
	assert.Len(t, alt.prompts["reviewer"], 1, "only the limited worker runs again, on the next backend")
	log := readWaveLog(t, dir)
	var sw []runfiles.BackendSwitchedRecord
	byWorker := map[int]runfiles.WaveWorkerRecord{}
	var fin runfiles.WaveFinishedRecord
	for _, ev := range log {
		switch ev.Topic {
		case runfiles.TopicBackendSwitched:
			var r runfiles.BackendSwitchedRecord
			runfiles.Decode(ev, &r)
			sw = append(sw, r)
		case runfiles.TopicWaveWorkerFinished:
			var r runfiles.WaveWorkerRecord
			runfiles.Decode(ev, &r)
			byWorker[r.Index] = r
		case runfiles.TopicWaveFinished:
			runfiles.Decode(ev, &fin)
		}
	}
	require.Len(t, sw, 1)
	assert.Equal(t, runfiles.BackendSwitchedRecord{Iteration: 2, Hat: "reviewer", From: "fake", To: "alt",
		Reason: runfiles.SwitchRateLimit, ResetAt: sw[0].ResetAt, Message: "usage limit reached"}, sw[0])
	assert.Equal(t, "alt", byWorker[1].Backend)
	assert.Equal(t, 2, byWorker[1].Attempt, "the move runs in files of a new attempt")
	assert.Equal(t, "fake", byWorker[0].Backend)
	assert.Equal(t, []int{0, 1, 2}, fin.Succeeded)
	assert.Len(t, alt.prompts["synthesizer"], 1, "the chain stays on the next backend while the first is out")
	// What the moved attempt spent counts, as a failed iteration's does:
	// in the run's totals, its backend's and the wave's iteration.
	assert.InDelta(t, 0.35, sum.Cost.USD, 1e-9, "three workers' 0.1 and the moved attempt's 0.05")
	assert.Equal(t, int64(3*15+7), sum.Usage.Total())
	assert.InDelta(t, 0.25, sum.ByBackend["fake"].CostUSD, 1e-9)
	assert.InDelta(t, 0.1, sum.ByBackend["alt"].CostUSD, 1e-9)
	var waveIter runfiles.IterationFinishedRecord
	for _, ev := range log {
		if ev.Topic == runfiles.TopicIterationFinished {
			var r runfiles.IterationFinishedRecord
			runfiles.Decode(ev, &r)
			if r.WaveID != "" {
				waveIter = r
			}
		}
	}
	assert.InDelta(t, 0.35, waveIter.CostUSD, 1e-9)
	assert.Equal(t, int64(3*15+7), waveIter.Usage.Total())

	alone := &waveBackend{n: 3, limit: map[int]bool{1: true}}
	sum, log, _ = runWave(t, alone, 0)
	assert.Equal(t, runfiles.ReasonCompleted, sum.Reason)
	assert.Len(t, alone.prompts["reviewer"], 3, "without a chain the limited worker is not run again")
	require.Len(t, alone.prompts["synthesizer"], 1)
	assert.Contains(t, alone.prompts["synthesizer"][0], "Workers 2 failed.", "a rate limit leaves the worker without a result")
	assert.Empty(t, topics(log, func(ev events.Event) bool { return ev.Topic == runfiles.TopicBackendSwitched }))
}

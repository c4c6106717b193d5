package runfiles

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// The fold knows the wave in flight: which workers ended (counted as each
// does, never twice), how many of each one's lines are merged, and that
// the wave's iteration consumes its events even when a worker failed.
func TestFoldFollowsAWave(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	worker := func(off int64, i int, outcome Outcome, cost float64) events.Record {
		return ralphRecord(off, TopicWaveWorkerFinished, WaveWorkerRecord{WaveID: "w-1", Iteration: 2, Hat: "reviewer", Index: i,
			Outcome: outcome, Usage: events.Usage{InputTokens: 10}, CostUSD: cost}, t0)
	}
	result := func(off int64, i int) events.Record {
		return events.Record{Offset: off, Line: []byte("x"), Event: events.Event{TS: t0, Topic: "review.done", Source: events.SourceAgent,
			Hat: "reviewer", Iteration: 2, Wave: &events.Wave{WaveID: "w-1", WaveIndex: i, WaveTotal: 3}}}
	}
	s := NewRunState()
	for i, off := range []int64{100, 200, 300} {
		s.Apply(events.Record{Offset: off, Line: []byte("x"), Event: events.Event{TS: t0, Topic: "review.perspective", Source: events.SourceRalph,
			Wave: &events.Wave{WaveID: "w-1", WaveIndex: i, WaveTotal: 3}}}, noRoutes{})
	}
	require.Len(t, s.Pending, 3)
	s.Apply(ralphRecord(400, TopicIterationStarted, IterationStartedRecord{Iteration: 2, Hat: "reviewer", Events: []int64{100, 200, 300}}, t0), noRoutes{})
	s.Apply(ralphRecord(450, TopicWaveStarted, WaveStartedRecord{Iteration: 2, Hat: "reviewer", WaveID: "w-1", Total: 3, Concurrency: 3,
		Events: []int64{100, 200, 300}}, t0), noRoutes{})
	require.NotNil(t, s.Wave)
	assert.Equal(t, []int{0, 1, 2}, s.Wave.Pending())

	s.Apply(worker(500, 1, OutcomeSuccess, 0.5), noRoutes{})
	s.Apply(worker(550, 1, OutcomeSuccess, 0.5), noRoutes{}) // a repeat counts once
	s.Apply(worker(600, 0, OutcomeFailure, 0.25), noRoutes{})
	assert.Equal(t, []int{2}, s.Wave.Pending())
	assert.InDelta(t, 0.75, s.CostUSD, 1e-9, "each worker's cost counts as it ends")
	assert.Equal(t, WaveProgress{ID: "w-1", Hat: "reviewer", Iteration: 2, Total: 3, Concurrency: 3, Done: 2, Failed: 1}, s.Wave.Progress())

	// A worker moved to another backend: its attempt counts, and it is
	// still to run.
	moved := WaveWorkerRecord{WaveID: "w-1", Iteration: 2, Hat: "reviewer", Index: 2, Outcome: OutcomeFailure,
		Failure: events.FailureRateLimit, Usage: events.Usage{InputTokens: 4}, CostUSD: 0.125, Backend: "claude", Moved: true}
	s.Apply(ralphRecord(620, TopicWaveWorkerFinished, moved, t0), noRoutes{})
	assert.Equal(t, []int{2}, s.Wave.Pending(), "a moved worker runs again")
	assert.InDelta(t, 0.875, s.CostUSD, 1e-9, "what the moved attempt spent counts")
	assert.InDelta(t, 0.125, s.ByBackend["claude"].CostUSD, 1e-9)
	assert.Equal(t, []WaveWorkerRecord{moved}, s.Wave.Moved)

	s.Apply(worker(650, 2, OutcomeSuccess, 0), noRoutes{})
	s.Apply(result(700, 1), noRoutes{})
	s.Apply(result(750, 2), noRoutes{})
	s.Apply(result(800, 2), noRoutes{})
	assert.Equal(t, map[int]int{1: 1, 2: 2}, s.Wave.Merged, "the lines merged so far, per worker")

	fin := WaveFinishedRecord{WaveID: "w-1", Iteration: 2, Hat: "reviewer", Total: 3, Succeeded: []int{1, 2}, Failed: []int{0}, Lines: 3}
	s.Apply(ralphRecord(850, TopicWaveFinished, fin, t0), noRoutes{})
	s.Apply(ralphRecord(900, TopicIterationFinished, IterationFinishedRecord{Iteration: 2, Hat: "reviewer", Outcome: WaveOutcome(fin),
		WaveID: "w-1", CostUSD: 0.875, Usage: events.Usage{InputTokens: 34}}, t0), noRoutes{})
	assert.Nil(t, s.Wave)
	require.NotNil(t, s.LastWave)
	assert.Contains(t, s.LastWave.MissingText(), "2 of 3 workers have a result. Workers 1 failed.")
	assert.InDelta(t, 0.875, s.CostUSD, 1e-9, "the wave's iteration does not count its workers again")
	assert.Equal(t, int64(34), s.Usage.Total())
	assert.Equal(t, 1, s.ConsecutiveFailures, "a failed worker fails the wave's iteration")
	assert.Equal(t, 1, s.Activations["reviewer"])
	assert.Empty(t, s.Pending, "the wave's events are done with, though a worker failed")
}

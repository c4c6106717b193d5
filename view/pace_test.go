package view

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

func pacedWait() runfiles.PacedRecord {
	return runfiles.PacedRecord{Window: "tokens_per_hour", Used: 1200, Budget: 1000, Estimate: 600,
		Until: time.Date(2026, 11, 22, 11, 5, 0, 0, time.Local), WaitMS: 3_540_000}
}

// Every view says a pacing wait the same way, from the one model: the
// live panel, ralph watch (from the checkpoint), ralph status and the
// event listing.
func TestPacingWaitIsShown(t *testing.T) {
	const want = "paced until 11:05 (tokens_per_hour: 1200/1000)"
	now := time.Date(2026, 11, 22, 10, 6, 0, 0, time.Local)

	m := NewModel(func() time.Time { return now })
	it := testIteration(1, "builder")
	m.IterationStarted(it)
	m.IterationFinished(it, events.AgentResult{Usage: events.Usage{InputTokens: 1200}})
	m.Paced(pacedWait())
	run := m.Run()
	assert.Equal(t, PhasePaced, run.Phase)
	assert.Contains(t, iterationLine(run, now), want)
	m.IterationStarted(testIteration(2, "builder"))
	assert.Nil(t, m.Run().Paced, "the wait is over once the next iteration starts")

	p := pacedWait()
	st := runfiles.RunState{Iteration: 1, LastFinished: &runfiles.FinishedIteration{Iteration: 1, Hat: "builder"}, Paced: &p}
	watched := runOf(&st, runfiles.PhasePacing, true)
	assert.Equal(t, PhasePaced, watched.Phase)
	assert.Contains(t, iterationLine(watched, now), want)
	assert.NotEqual(t, PhasePaced, runOf(&st, runfiles.PhasePacing, false).Phase, "nothing waits in a run nobody runs")

	var out bytes.Buffer
	WriteStatus(&out, runfiles.Status{Running: true, PID: 7, RunID: "r", Iteration: 1, Paced: &p})
	assert.Contains(t, out.String(), want+"\n")

	line := runfiles.RalphEvent(runfiles.TopicLoopPaced, p)
	text, ok := describers[runfiles.TopicLoopPaced](line)
	require.True(t, ok)
	assert.Equal(t, want+", waiting 59m00s", text)
}

// A day window's wait that ends tomorrow names the day.
func TestPacingWaitEndingAnotherDayNamesTheDay(t *testing.T) {
	p := runfiles.PacedRecord{Window: "tokens_per_day", Used: 9000, Budget: 8000, Estimate: 600,
		Until: time.Date(2026, 11, 23, 9, 0, 0, 0, time.Local), WaitMS: (14 * time.Hour).Milliseconds()}
	assert.Equal(t, "paced until Mon Nov 23 09:00 (tokens_per_day: 9000/8000)", PacedText(p))
	assert.Equal(t, "paced until 11:05 (tokens_per_hour: 1200/1000)", PacedText(pacedWait()))
}

package runfiles

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// The pacing windows are folded from the iterations' lines: each that used
// something is a sample, what is older than a day before the newest is
// forgotten, and loop.paced is the wait in force until the next iteration
// starts.
func TestFoldKeepsTheLastDaysSpending(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	finished := func(off int64, at time.Duration, tokens int64, cost float64) events.Record {
		return ralphRecord(off, TopicIterationFinished, IterationFinishedRecord{Outcome: OutcomeSuccess,
			Usage: events.Usage{InputTokens: tokens}, CostUSD: cost}, t0.Add(at))
	}
	s := NewRunState()
	for _, r := range []events.Record{
		ralphRecord(0, TopicLoopStarted, LoopStartedRecord{RunID: "r"}, t0),
		finished(100, time.Minute, 500, 0.1),
		finished(200, 2*time.Minute, 0, 0), // used nothing: no sample
		finished(300, 3*time.Minute, 700, 0),
		ralphRecord(400, TopicLoopPaced, PacedRecord{Window: "tokens_per_hour", Used: 1200, Budget: 1000,
			Until: t0.Add(61 * time.Minute)}, t0.Add(3*time.Minute)),
	} {
		s.Apply(r, noRoutes{})
	}
	assert.Equal(t, []Spent{{At: t0.Add(time.Minute), Tokens: 500, CostUSD: 0.1}, {At: t0.Add(3 * time.Minute), Tokens: 700}}, s.Spent)
	require.NotNil(t, s.Paced)
	assert.Equal(t, "tokens_per_hour: 1200/1000", s.Paced.Text())

	s.Apply(ralphRecord(500, TopicIterationStarted, IterationStartedRecord{Iteration: 3}, t0.Add(61*time.Minute)), noRoutes{})
	assert.Nil(t, s.Paced, "the wait is over once the next iteration starts")

	s.Apply(finished(600, 2*time.Minute+PaceHorizon, 100, 0), noRoutes{})
	assert.Equal(t, []Spent{{At: t0.Add(3 * time.Minute), Tokens: 700}, {At: t0.Add(2*time.Minute + PaceHorizon), Tokens: 100}}, s.Spent,
		"a day after the newest, the oldest sample is forgotten")
}

func TestPacedRecordText(t *testing.T) {
	assert.Equal(t, "cost_per_day: $12.50/$10.00", PacedRecord{Window: "cost_per_day", Used: 12.5, Budget: 10}.Text())
	assert.Equal(t, "tokens_per_day: 2500000/2000000", PacedRecord{Window: "tokens_per_day", Used: 2.5e6, Budget: 2e6}.Text())
}

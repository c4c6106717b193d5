package runfiles

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// ralphRecord builds a log record of one of ralph's lines at t.
func ralphRecord(off int64, topic string, payload any, at time.Time) events.Record {
	e := RalphEvent(topic, payload)
	e.TS = at
	line, _ := json.Marshal(e)
	return events.Record{Offset: off, Line: line, Event: e}
}

// Waiting for a person is not runtime, whether ralph waited alive, was
// killed while waiting, or was dead when the answer came: the fold reads
// it from the log's own times.
func TestRuntimeExcludesWaitingForAPerson(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	asked := func(off int64, d time.Duration) events.Record {
		// A tag's question: its id comes from its offset, q100.
		return events.Record{Offset: off, Event: events.Event{Topic: TopicHumanAsked, Payload: events.StringPayload("Which?"),
			Source: events.SourceTag, Hat: "builder", TS: at(d)}}
	}
	routed := func(off int64, d time.Duration) events.Record {
		return ralphRecord(off, TopicEventRouted, RoutedRecord{Offset: 100, Topic: TopicHumanAsked, To: []string{"builder"}, As: AsQuestion}, at(d))
	}
	answered := func(off int64, d time.Duration) events.Record {
		r := events.Record{Offset: off, Event: events.Event{Topic: TopicHumanAnswered, Source: events.SourceHuman, TS: at(d)}}
		r.Event.Payload = events.ObjectPayload(AnsweredRecord{ID: "q100", Answer: "yes"})
		return r
	}
	started := ralphRecord(0, TopicLoopStarted, LoopStartedRecord{RunID: "r"}, t0)
	resumed := func(off int64, d time.Duration) events.Record {
		return ralphRecord(off, TopicLoopResumed, LoopResumedRecord{}, at(d))
	}
	end := func(off int64, d time.Duration) events.Record {
		return ralphRecord(off, TopicLoopTerminate, TerminateRecord{Reason: ReasonCompleted}, at(d))
	}
	cases := []struct {
		name string
		recs []events.Record
	}{
		{"waited alive", []events.Record{started, asked(100, 9*time.Second), routed(200, 10*time.Second),
			answered(300, time.Hour), end(400, time.Hour+5*time.Second)}},
		{"killed while waiting, answered while dead", []events.Record{started, asked(100, 9*time.Second), routed(200, 10*time.Second),
			answered(300, time.Hour), resumed(400, 2*time.Hour), end(500, 2*time.Hour+5*time.Second)}},
		{"killed while waiting, answered after the resume", []events.Record{started, asked(100, 9*time.Second), routed(200, 10*time.Second),
			resumed(300, time.Hour), answered(400, 2*time.Hour), end(500, 2*time.Hour+5*time.Second)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewRunState()
			for _, r := range tc.recs {
				s.Apply(r, noRoutes{})
			}
			assert.Nil(t, s.Question)
			assert.Equal(t, 15*time.Second, s.PriorRuntime)
			require.Len(t, s.Pending, 1, "the answer waits for the hat that asked")
			assert.Equal(t, []string{"builder"}, s.Pending[0].To)
		})
	}
	t.Run("while it waits the clock stands still", func(t *testing.T) {
		s := NewRunState()
		for _, r := range []events.Record{started, asked(100, 9*time.Second), routed(200, 10*time.Second)} {
			s.Apply(r, noRoutes{})
		}
		require.NotNil(t, s.Question)
		assert.Equal(t, 10*time.Second, s.Runtime(at(3*time.Hour)))
	})
}

package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// humanRecorder is a reporter that hears about questions and acts on
// them, as a person (or a hook) would.
type humanRecorder struct {
	nopReporter
	waiting []Question
	replies []Reply
	onWait  func(q Question)
}

func (h *humanRecorder) WaitingForHuman(q Question) {
	h.waiting = append(h.waiting, q)
	if h.onWait != nil {
		h.onWait(q)
	}
}

func (h *humanRecorder) HumanAnswered(_ Question, r Reply) { h.replies = append(h.replies, r) }

// asks is a turn that asks a person, as `ralph ask` does; at, when set,
// dates the question.
func asks(text string, timeout time.Duration, at time.Time, options ...string) events.Event {
	line, _, err := AskLine(text, options, timeout)
	if err != nil {
		panic(err)
	}
	line.TS = at
	return line
}

// askingBuilder: the coordinator hands out the task, the builder asks,
// then (with the answer) publishes build.done, and the reviewer completes.
func askingBuilder(question events.Event) *fakeBackend {
	return &fakeBackend{byHat: map[string][]turn{
		"ralph":    {{text: tagged("build.task", "build it")}},
		"builder":  {{emit: []events.Event{question}}, {emit: []events.Event{ev("build.done", "built")}}},
		"reviewer": {{text: tagged("LOOP_COMPLETE", "done")}},
	}}
}

func TestQuestionWaitsForTheAnswerAndTheAskingHatGetsIt(t *testing.T) {
	dir := t.TempDir()
	b := askingBuilder(asks("Which database?", 0, time.Time{}, "postgres", "sqlite"))
	rec := &humanRecorder{}
	rec.onWait = func(q Question) {
		assert.Equal(t, []string{"ralph", "builder"}, b.hats, "no iteration starts while the question waits")
		pending, err := PendingQuestion(dir)
		require.NoError(t, err)
		assert.Equal(t, &q, pending)
		require.NoError(t, Answer(dir, q.ID, "postgres", "test"))
		assert.ErrorAs(t, Answer(dir, q.ID, "again", "test"), new(*NotPendingError), "answered already")
	}
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, ReasonCompleted, out.Reason, out.Message)
	assert.Equal(t, []string{"ralph", "builder", "builder", "reviewer"}, b.hats, "the hat that asked runs next")
	require.Len(t, rec.waiting, 1)
	q := rec.waiting[0]
	assert.Equal(t, "Which database?", q.Text)
	assert.Equal(t, []string{"postgres", "sqlite"}, q.Options)
	assert.Equal(t, "builder", q.Hat)
	assert.Equal(t, 2, q.Iteration)
	assert.True(t, q.Deadline.IsZero(), "no timeout: waits until answered")
	assert.Equal(t, []Reply{{Text: "postgres", By: "test"}}, rec.replies)
	assert.Contains(t, b.prompts[2], "human.answered")
	assert.Contains(t, b.prompts[2], `"question": "Which database?"`)
	assert.Contains(t, b.prompts[2], `"answer": "postgres"`)
	assert.Contains(t, b.prompts[0], "/usr/local/bin/ralph ask", "every prompt says how to ask")

	recs := readLog(t, dir)
	assert.Equal(t, 1, countTopic(recs, TopicHumanAnswered))
	pending, err := PendingQuestion(dir)
	require.NoError(t, err)
	assert.Nil(t, pending)
}

func TestQuestionTimeout(t *testing.T) {
	past := time.Now().Add(-time.Hour) // the deadline has passed when the run waits
	t.Run("continue: the next prompt says no answer came", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which database?", time.Minute, past))
		rec := &humanRecorder{}
		out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonCompleted, out.Reason, out.Message)
		assert.Equal(t, []string{"ralph", "builder", "builder", "reviewer"}, b.hats)
		assert.Equal(t, []Reply{{TimedOut: true}}, rec.replies)
		assert.Contains(t, b.prompts[2], "No answer came to your question")
		require.Len(t, rec.waiting, 1)
		assert.Equal(t, past.Add(time.Minute).UTC(), rec.waiting[0].Deadline.UTC(), "asked_at + timeout, from the log")
	})
	t.Run("stop: the run ends with no_answer", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which database?", time.Minute, past))
		s := settings()
		s.Human.OnTimeout = OnTimeoutStop
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonNoAnswer, out.Reason)
		assert.Equal(t, 1, out.ExitCode)
		assert.Equal(t, []string{"ralph", "builder"}, b.hats)
		assert.Equal(t, 1, countTopic(readLog(t, dir), TopicHumanTimedOut))
	})
	t.Run("the config's timeout applies when the question has none", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which database?", 0, past))
		s := settings()
		s.Human = HumanSettings{Timeout: time.Minute, OnTimeout: OnTimeoutStop}
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonNoAnswer, out.Reason)
	})
}

func TestWaitingEndsOnStopAndSignal(t *testing.T) {
	t.Run("a stop request", func(t *testing.T) {
		dir := t.TempDir()
		rec := &humanRecorder{onWait: func(Question) { require.NoError(t, RequestStop(dir, StopAtBoundary)) }}
		out, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
			func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonStopped, out.Reason)
	})
	t.Run("a signal", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		rec := &humanRecorder{onWait: func(Question) { cancel() }}
		out, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
			func(o *Options) { o.Reporter = rec }).Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, ReasonInterrupted, out.Reason)
		pending, err := PendingQuestion(dir)
		require.NoError(t, err)
		require.NotNil(t, pending, "the question survives the interrupt")

		// Answered while no ralph runs; the resumed run goes on with it.
		require.NoError(t, Answer(dir, "", "sqlite", "test"))
		b := askingBuilder(asks("unused", 0, time.Time{}))
		b.hatRuns = map[string]int{"builder": 1}
		out, err = newTestEngine(t, dir, b, settings(), func(o *Options) { o.Start = StartResume }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonCompleted, out.Reason, out.Message)
		assert.Equal(t, []string{"builder", "reviewer"}, b.hats)
		assert.Contains(t, b.prompts[0], `"answer": "sqlite"`)
	})
}

func TestQuestionDecisions(t *testing.T) {
	t.Run("two questions in one iteration: the last is asked", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("first?", 0, time.Time{}))
		b.byHat["builder"][0].emit = append(b.byHat["builder"][0].emit, asks("second?", 0, time.Time{}))
		rec := &humanRecorder{onWait: func(q Question) { require.NoError(t, Answer(dir, "", "yes", "test")) }}
		_, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		require.Len(t, rec.waiting, 1)
		assert.Equal(t, "second?", rec.waiting[0].Text)
		assert.Equal(t, 1, countTopic(readLog(t, dir), TopicEventRejected, TopicHumanAsked))
		assert.Contains(t, b.prompts[2], "superseded")
	})
	t.Run("a question beside a completion claim is not asked", func(t *testing.T) {
		dir := t.TempDir()
		b := happy()
		b.byHat["reviewer"] = []turn{{emit: []events.Event{asks("Ship it?", 0, time.Time{})}, text: tagged("LOOP_COMPLETE", "done")}}
		rec := &humanRecorder{}
		out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, ReasonCompleted, out.Reason)
		assert.Empty(t, rec.waiting)
		assert.Equal(t, 1, countTopic(readLog(t, dir), TopicEventRejected, TopicHumanAsked))
	})
	t.Run("scope never rejects a question", func(t *testing.T) {
		dir := t.TempDir()
		s := settings()
		s.EnforceHatScope = true
		rec := &humanRecorder{onWait: func(q Question) { require.NoError(t, Answer(dir, "", "ok", "test")) }}
		_, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), s,
			func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Len(t, rec.waiting, 1, "builder publishes only build.done and build.blocked")
	})
	t.Run("an agent may not answer for a person", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which?", 0, time.Time{}))
		b.byHat["builder"][0].emit = append(b.byHat["builder"][0].emit, ev(TopicHumanAnswered, "yes"))
		rec := &humanRecorder{onWait: func(q Question) { require.NoError(t, Answer(dir, "", "no", "test")) }}
		_, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []Reply{{Text: "no", By: "test"}}, rec.replies)
		assert.Equal(t, 1, countTopic(readLog(t, dir), TopicEventRejected, TopicHumanAnswered))
	})
}

func TestAnswerRefusesWhatIsNotPending(t *testing.T) {
	dir := t.TempDir()
	var notPending *NotPendingError
	var empty *QuestionError
	require.ErrorAs(t, Answer(dir, "", " ", "test"), &empty)
	err := Answer(dir, "", "yes", "test")
	require.ErrorAs(t, err, &notPending, "no run at all")

	rec := &humanRecorder{}
	rec.onWait = func(q Question) {
		err := Answer(dir, "q-nope", "yes", "test")
		require.ErrorAs(t, err, &notPending)
		assert.Equal(t, q.ID, notPending.Pending.ID)
		require.NoError(t, Answer(dir, q.ID, "yes", "test"))
	}
	_, err = newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
		func(o *Options) { o.Reporter = rec }).Run(t.Context())
	require.NoError(t, err)
	assert.ErrorIs(t, Answer(dir, "", "late", "test"), ErrRunOver)
}

// ralphRecord builds a log record of one of ralph's lines at t.
func ralphRecord(off int64, topic string, payload any, at time.Time) events.Record {
	e := ralphEvent(topic, payload)
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
		return ralphRecord(off, TopicEventRouted, routedRecord{Offset: 100, Topic: TopicHumanAsked, To: []string{"builder"}, As: AsQuestion}, at(d))
	}
	answered := func(off int64, d time.Duration) events.Record {
		r := events.Record{Offset: off, Event: events.Event{Topic: TopicHumanAnswered, Source: events.SourceHuman, TS: at(d)}}
		r.Event.Payload = events.ObjectPayload(answeredRecord{ID: "q100", Answer: "yes"})
		return r
	}
	started := ralphRecord(0, TopicLoopStarted, loopStartedRecord{RunID: "r"}, t0)
	resumed := func(off int64, d time.Duration) events.Record {
		return ralphRecord(off, TopicLoopResumed, loopResumedRecord{}, at(d))
	}
	end := func(off int64, d time.Duration) events.Record {
		return ralphRecord(off, TopicLoopTerminate, terminateRecord{Reason: ReasonCompleted}, at(d))
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

// An answer that lands between the last look at the log and the time-out
// line wins, as the fold has it: the run goes on with it, even with
// on_timeout: stop.
func TestAnAnswerJustBeforeTheTimeOutWins(t *testing.T) {
	dir := t.TempDir()
	b := askingBuilder(asks("Which database?", time.Minute, time.Now().Add(-time.Hour)))
	s := settings()
	s.Human.OnTimeout = OnTimeoutStop
	armed := false
	rec := &humanRecorder{onWait: func(Question) { armed = true }}
	fault := func(point string) bool {
		if armed && point == FaultAppendBefore {
			armed = false
			require.NoError(t, Answer(dir, "", "postgres", "test"))
		}
		return false
	}
	out, err := newTestEngine(t, dir, b, s, func(o *Options) { o.Reporter, o.Fault = rec, fault }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, ReasonCompleted, out.Reason, out.Message)
	assert.Equal(t, []Reply{{Text: "postgres", By: "test"}}, rec.replies)
	assert.Contains(t, b.prompts[2], `"answer": "postgres"`)
	assert.NotContains(t, b.prompts[2], "No answer came")
	assert.Equal(t, 1, countTopic(readLog(t, dir), TopicHumanTimedOut), "the time-out line was written, second")
}

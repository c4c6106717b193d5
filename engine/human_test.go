package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// humanRecorder is a reporter that hears about questions and acts on
// them, as a person (or a hook) would.
type humanRecorder struct {
	nopReporter
	waiting []runfiles.Question
	replies []Reply
	onWait  func(q runfiles.Question)
}

func (h *humanRecorder) WaitingForHuman(q runfiles.Question) {
	h.waiting = append(h.waiting, q)
	if h.onWait != nil {
		h.onWait(q)
	}
}

func (h *humanRecorder) HumanAnswered(_ runfiles.Question, r Reply) { h.replies = append(h.replies, r) }

// asks is a turn that asks a person, as `ralph ask` does; at, when set,
// dates the question.
func asks(text string, timeout time.Duration, at time.Time, options ...string) events.Event {
	line, _, err := runfiles.AskLine(text, options, timeout)
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
	rec.onWait = func(q runfiles.Question) {
		assert.Equal(t, []string{"ralph", "builder"}, b.hats, "no iteration starts while the question waits")
		pending, err := runfiles.PendingQuestion(dir)
		require.NoError(t, err)
		assert.Equal(t, &q, pending)
		require.NoError(t, runfiles.Answer(dir, q.ID, "postgres", "test"))
		assert.ErrorAs(t, runfiles.Answer(dir, q.ID, "again", "test"), new(*runfiles.NotPendingError), "answered already")
	}
	out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
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
	assert.Equal(t, 1, countTopic(recs, runfiles.TopicHumanAnswered))
	pending, err := runfiles.PendingQuestion(dir)
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
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
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
		assert.Equal(t, runfiles.ReasonNoAnswer, out.Reason)
		assert.Equal(t, 1, out.ExitCode)
		assert.Equal(t, []string{"ralph", "builder"}, b.hats)
		assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicHumanTimedOut))
	})
	t.Run("the config's timeout applies when the question has none", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which database?", 0, past))
		s := settings()
		s.Human = HumanSettings{Timeout: time.Minute, OnTimeout: OnTimeoutStop}
		out, err := newTestEngine(t, dir, b, s).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonNoAnswer, out.Reason)
	})
}

func TestWaitingEndsOnStopAndSignal(t *testing.T) {
	t.Run("a stop request", func(t *testing.T) {
		dir := t.TempDir()
		rec := &humanRecorder{onWait: func(runfiles.Question) { require.NoError(t, runfiles.RequestStop(dir, runfiles.StopAtBoundary)) }}
		out, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
			func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonStopped, out.Reason)
	})
	t.Run("a signal", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		rec := &humanRecorder{onWait: func(runfiles.Question) { cancel() }}
		out, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
			func(o *Options) { o.Reporter = rec }).Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonInterrupted, out.Reason)
		pending, err := runfiles.PendingQuestion(dir)
		require.NoError(t, err)
		require.NotNil(t, pending, "the question survives the interrupt")

		// Answered while no ralph runs; the resumed run goes on with it.
		require.NoError(t, runfiles.Answer(dir, "", "sqlite", "test"))
		b := askingBuilder(asks("unused", 0, time.Time{}))
		b.hatRuns = map[string]int{"builder": 1}
		out, err = newTestEngine(t, dir, b, settings(), func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
		assert.Equal(t, []string{"builder", "reviewer"}, b.hats)
		assert.Contains(t, b.prompts[0], `"answer": "sqlite"`)
	})
}

func TestQuestionDecisions(t *testing.T) {
	t.Run("two questions in one iteration: the last is asked", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("first?", 0, time.Time{}))
		b.byHat["builder"][0].emit = append(b.byHat["builder"][0].emit, asks("second?", 0, time.Time{}))
		rec := &humanRecorder{onWait: func(q runfiles.Question) { require.NoError(t, runfiles.Answer(dir, "", "yes", "test")) }}
		_, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		require.Len(t, rec.waiting, 1)
		assert.Equal(t, "second?", rec.waiting[0].Text)
		assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicEventRejected, runfiles.TopicHumanAsked))
		assert.Contains(t, b.prompts[2], "superseded")
	})
	t.Run("a question beside a completion claim is not asked", func(t *testing.T) {
		dir := t.TempDir()
		b := happy()
		b.byHat["reviewer"] = []turn{{emit: []events.Event{asks("Ship it?", 0, time.Time{})}, text: tagged("LOOP_COMPLETE", "done")}}
		rec := &humanRecorder{}
		out, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
		assert.Empty(t, rec.waiting)
		assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicEventRejected, runfiles.TopicHumanAsked))
	})
	t.Run("scope never rejects a question", func(t *testing.T) {
		dir := t.TempDir()
		s := settings()
		s.EnforceHatScope = true
		rec := &humanRecorder{onWait: func(q runfiles.Question) { require.NoError(t, runfiles.Answer(dir, "", "ok", "test")) }}
		_, err := newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), s,
			func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Len(t, rec.waiting, 1, "builder publishes only build.done and build.blocked")
	})
	t.Run("an agent may not answer for a person", func(t *testing.T) {
		dir := t.TempDir()
		b := askingBuilder(asks("Which?", 0, time.Time{}))
		b.byHat["builder"][0].emit = append(b.byHat["builder"][0].emit, ev(runfiles.TopicHumanAnswered, "yes"))
		rec := &humanRecorder{onWait: func(q runfiles.Question) { require.NoError(t, runfiles.Answer(dir, "", "no", "test")) }}
		_, err := newTestEngine(t, dir, b, settings(), func(o *Options) { o.Reporter = rec }).Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, []Reply{{Text: "no", By: "test"}}, rec.replies)
		assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicEventRejected, runfiles.TopicHumanAnswered))
	})
}

func TestAnswerRefusesWhatIsNotPending(t *testing.T) {
	dir := t.TempDir()
	var notPending *runfiles.NotPendingError
	var empty *runfiles.QuestionError
	require.ErrorAs(t, runfiles.Answer(dir, "", " ", "test"), &empty)
	err := runfiles.Answer(dir, "", "yes", "test")
	require.ErrorAs(t, err, &notPending, "no run at all")

	rec := &humanRecorder{}
	rec.onWait = func(q runfiles.Question) {
		err := runfiles.Answer(dir, "q-nope", "yes", "test")
		require.ErrorAs(t, err, &notPending)
		assert.Equal(t, q.ID, notPending.Pending.ID)
		require.NoError(t, runfiles.Answer(dir, q.ID, "yes", "test"))
	}
	_, err = newTestEngine(t, dir, askingBuilder(asks("Which?", 0, time.Time{})), settings(),
		func(o *Options) { o.Reporter = rec }).Run(t.Context())
	require.NoError(t, err)
	assert.ErrorIs(t, runfiles.Answer(dir, "", "late", "test"), runfiles.ErrRunOver)
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
	rec := &humanRecorder{onWait: func(runfiles.Question) { armed = true }}
	fault := func(point string) bool {
		if armed && point == FaultAppendBefore {
			armed = false
			require.NoError(t, runfiles.Answer(dir, "", "postgres", "test"))
		}
		return false
	}
	out, err := newTestEngine(t, dir, b, s, func(o *Options) { o.Reporter, o.Fault = rec, fault }).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason, out.Message)
	assert.Equal(t, []Reply{{Text: "postgres", By: "test"}}, rec.replies)
	assert.Contains(t, b.prompts[2], `"answer": "postgres"`)
	assert.NotContains(t, b.prompts[2], "No answer came")
	assert.Equal(t, 1, countTopic(readLog(t, dir), runfiles.TopicHumanTimedOut), "the time-out line was written, second")
}

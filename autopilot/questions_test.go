package autopilot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

func apEvent(topic string, p runfiles.AutopilotPayload) events.Event {
	return events.Event{TS: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Topic: topic, Payload: events.ObjectPayload(p), Source: events.SourceRalph}
}

// A question a task's loop waits on is the slot's until it no longer
// waits, or the task leaves its slot; progress.md lists it with the
// command that answers it, on one line whatever the agent wrote.
func TestAQuestionIsTheSlotsUntilAnswered(t *testing.T) {
	st := runfiles.NewAutopilotState()
	st.Apply(apEvent(runfiles.TopicAutopilotStarted, runfiles.AutopilotPayload{RunID: "r1", Parallel: 2}))
	st.Apply(apEvent(runfiles.TopicTaskAssigned, runfiles.AutopilotPayload{Task: "t-1", Title: "Pick a database", Slot: "1", Attempt: 1}))
	q := &runfiles.Question{ID: "q-1", Text: "Which\ndatabase?", Options: []string{"postgres", "sqlite"}, Hat: "builder",
		AskedAt: time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)}
	st.Apply(apEvent(runfiles.TopicTaskAsked, runfiles.AutopilotPayload{Task: "t-2", Slot: "1", Question: q}))
	assert.Nil(t, st.Active["1"].Question, "a report about another task changes nothing")
	st.Apply(apEvent(runfiles.TopicTaskAsked, runfiles.AutopilotPayload{Task: "t-1", Slot: "1", Question: q}))
	require.NotNil(t, st.Active["1"].Question)

	page := runfiles.RenderProgress(st, time.Date(2026, 11, 22, 10, 2, 0, 0, time.UTC))
	assert.Contains(t, page, "- Status: running; 1 waiting for a person")
	assert.Contains(t, page, "## Waiting for a person\n\n- t-1 (Pick a database) asks (q-1, hat builder, 2026-11-22T10:01:00Z): Which database?\n"+
		"  - options: postgres | sqlite\n  - answer with `ralph answer --task t-1 q-1 \"TEXT\"`\n")

	st.Apply(apEvent(runfiles.TopicTaskAnswered, runfiles.AutopilotPayload{Task: "t-1", Slot: "1", Question: q}))
	assert.Nil(t, st.Active["1"].Question)
	assert.NotContains(t, runfiles.RenderProgress(st, time.Now()), "waiting for a person")

	st.Apply(apEvent(runfiles.TopicTaskAsked, runfiles.AutopilotPayload{Task: "t-1", Slot: "1", Question: q}))
	st.Apply(apEvent(runfiles.TopicTaskFinished, runfiles.AutopilotPayload{Task: "t-1", Slot: "1"}))
	require.Len(t, st.MergeQueue, 1)
	assert.Nil(t, st.MergeQueue[0].Question, "a finished loop waits on nobody")
}

// The question a loop waits on is read again only on the lines that can
// change it, not on every line an agent emits.
func TestAQuestionIsReadAgainOnlyWhenItMayHaveChanged(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, runfiles.DirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tail := &questionTail{ws: ws}
	assert.False(t, tail.due(), "no run yet")

	log := filepath.Join(dir, "events-20261122-100000.jsonl")
	require.NoError(t, os.WriteFile(filepath.Join(dir, runfiles.CurrentEventsFile), []byte(".ralph/events-20261122-100000.jsonl\n"), 0o644))
	add := func(topic string) {
		t.Helper()
		require.NoError(t, events.AppendTo(log, events.Event{Topic: topic, Source: events.SourceRalph}))
	}
	add(runfiles.TopicLoopStarted)
	assert.True(t, tail.due(), "the first look at a run")
	assert.False(t, tail.due(), "nothing new")
	for _, step := range []struct {
		topic string
		due   bool
	}{
		{"build.done", false},
		{runfiles.TopicEventRouted, false},
		{runfiles.TopicIterationSettled, false},
		{runfiles.TopicHumanAsked, true},
		{runfiles.TopicIterationFinished, false},
		{runfiles.TopicEventRouted, true}, // it may decide the question
		{runfiles.TopicIterationSettled, true},
		{runfiles.TopicEventRouted, false}, // decided
		{runfiles.TopicHumanAnswered, true},
		{runfiles.TopicHumanTimedOut, true},
		{runfiles.TopicLoopTerminate, true},
	} {
		add(step.topic)
		assert.Equal(t, step.due, tail.due(), "after %s", step.topic)
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, runfiles.CurrentEventsFile), []byte(".ralph/events-20261122-110000.jsonl\n"), 0o644))
	assert.True(t, tail.due(), "a new run is looked at")
}

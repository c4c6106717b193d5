package runfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func apply(st *AutopilotState, topic string, p AutopilotPayload) {
	st.Apply(events.Event{TS: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), Topic: topic, Payload: events.ObjectPayload(p), Source: events.SourceRalph})
}

// A task delivered as a pull request leaves the merge queue for the
// reviews, where a new run finds it; a conflict sends it back to the queue
// with its pull request, and its end takes it out.
func TestReviewsFoldAndOutliveTheRun(t *testing.T) {
	st := NewAutopilotState()
	apply(st, TopicAutopilotStarted, AutopilotPayload{RunID: "r1", Parallel: 1})
	apply(st, TopicTaskAssigned, AutopilotPayload{Task: "7", Title: "Seven", Slot: "1", Worktree: ".worktrees/7", Branch: "ralph/7", Attempt: 1})
	apply(st, TopicTaskFinished, AutopilotPayload{Task: "7", Slot: "1"})
	apply(st, TopicMergeStarted, AutopilotPayload{Task: "7"})
	apply(st, TopicMergeDone, AutopilotPayload{Task: "7", Base: "b1", Commit: "c1", Remote: "origin", Lease: "", Verified: []string{"tests_pass"}})
	require.Len(t, st.MergeQueue, 1)
	assert.Equal(t, TaskMerge{TaskSlot: st.MergeQueue[0].TaskSlot, Step: MergeDone, Base: "b1", Commit: "c1", Remote: "origin",
		Verified: []string{"tests_pass"}}, st.MergeQueue[0])
	apply(st, TopicMergePushed, AutopilotPayload{Task: "7", Commit: "c1", Remote: "origin", Branch: "ralph/7"})
	assert.Equal(t, MergePushed, st.MergeQueue[0].Step)
	apply(st, TopicTaskPROpened, AutopilotPayload{Task: "7", Title: "Seven", Number: 3, URL: "https://forge.test/pull/3", Commit: "c1"})
	assert.Empty(t, st.MergeQueue)
	require.Len(t, st.Reviews, 1)
	assert.Equal(t, PullRequest{Number: 3, URL: "https://forge.test/pull/3", Head: "c1", OpenedAt: st.Reviews[0].PR.OpenedAt}, st.Reviews[0].PR)
	assert.Equal(t, ".worktrees/7", st.Reviews[0].Worktree)
	assert.True(t, st.Started("7"), "a task in review is not started again")
	assert.True(t, st.Idle(), "nothing runs or waits to merge")

	apply(st, TopicAutopilotStopped, AutopilotPayload{Reason: "stopped"})
	apply(st, TopicAutopilotStarted, AutopilotPayload{RunID: "r2", Parallel: 1})
	require.Len(t, st.Reviews, 1, "a new run follows the pull requests an earlier one opened")
	assert.True(t, st.Started("7"))

	apply(st, TopicTaskPRConflicted, AutopilotPayload{Task: "7", Number: 3, Commit: "c1"})
	assert.Empty(t, st.Reviews)
	require.Len(t, st.MergeQueue, 1)
	m := st.MergeQueue[0]
	assert.Equal(t, MergeQueued, m.Step)
	require.NotNil(t, m.Updates)
	assert.Equal(t, "c1", m.Updates.Head)
	assert.Equal(t, "7", m.Task, "the queued merge is the task's, whole")
	// Its merge conflicts: the task's loop runs again, and what it
	// delivers still updates the pull request.
	apply(st, TopicTaskRetry, AutopilotPayload{Task: "7", Attempt: 2})
	apply(st, TopicTaskAssigned, AutopilotPayload{Task: "7", Title: "Seven", Slot: "1", Worktree: ".worktrees/7", Branch: "ralph/7", Attempt: 2})
	require.NotNil(t, st.Active["1"].Updates)
	apply(st, TopicTaskFinished, AutopilotPayload{Task: "7", Slot: "1", Attempt: 2})
	require.Len(t, st.MergeQueue, 1)
	require.NotNil(t, st.MergeQueue[0].Updates)
	assert.Equal(t, 3, st.MergeQueue[0].Updates.Number)
	apply(st, TopicTaskPROpened, AutopilotPayload{Task: "7", Number: 3, URL: "https://forge.test/pull/3", Commit: "c2"})
	require.Len(t, st.Reviews, 1)
	assert.Equal(t, "c2", st.Reviews[0].PR.Head)
	assert.Nil(t, st.Reviews[0].Updates)

	apply(st, TopicTaskCompleted, AutopilotPayload{Task: "7", Title: "Seven", Commit: "m1", Number: 3, URL: "https://forge.test/pull/3"})
	assert.Empty(t, st.Reviews)
	require.Len(t, st.Completed, 1)
	assert.Equal(t, "https://forge.test/pull/3", st.Completed[0].URL)
	assert.Contains(t, RenderProgress(st, time.Now()), "completed: 7 (Seven)")
}

func TestProgressListsTheTasksInReview(t *testing.T) {
	st := NewAutopilotState()
	st.RunID = "r"
	st.Reviews = []TaskReview{{TaskSlot: TaskSlot{Task: "7", Title: "Seven"}, PR: PullRequest{Number: 3, URL: "https://forge.test/pull/3"}}}
	page := RenderProgress(st, time.Now())
	assert.Contains(t, page, " · in review: 1\n")
	assert.Contains(t, page, "## In review\n\n- 7 (Seven): pull request #3, https://forge.test/pull/3\n")
}

func TestReadLoopReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	log := `{"ts":"2026-11-28T10:00:00Z","topic":"loop.started","payload":{"run_id":"r"},"source":"ralph"}
{"ts":"2026-11-28T10:00:01Z","topic":"git.commit","payload":{"iteration":1,"hat":"ralph","hash":"0123456789abcdef","subject":"add --json"},"source":"ralph"}
{"ts":"2026-11-28T10:00:02Z","topic":"build.done","payload":"first","source":"agent"}
not json
{"ts":"2026-11-28T10:00:03Z","topic":"LOOP_COMPLETE","payload":"Added --json.","source":"tag"}
{"ts":"2026-11-28T10:00:04Z","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0,"iterations":2,"tokens":1200,"cost_usd":0.5,"runtime_ms":3000},"source":"ralph"}
`
	require.NoError(t, os.WriteFile(path, []byte(log), 0o600))
	r, err := ReadLoopReport(path)
	require.NoError(t, err)
	require.NotNil(t, r.Last)
	assert.Equal(t, "LOOP_COMPLETE", r.Last.Topic)
	assert.Equal(t, "Added --json.", r.Last.PayloadText())
	require.NotNil(t, r.End)
	assert.Equal(t, ReasonCompleted, r.End.Reason)
	assert.Equal(t, 2, r.End.Iterations)
	assert.Equal(t, []CommitRecord{{Iteration: 1, Hat: "ralph", Hash: "0123456789abcdef", Subject: "add --json"}}, r.Commits)

	none, err := ReadLoopReport(filepath.Join(t.TempDir(), "missing.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, LoopReport{}, none)
}

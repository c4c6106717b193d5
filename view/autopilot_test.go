package view

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestWriteAutopilotStatus renders a running autopilot with a task run
// here, one on a worker, one whose loop is not running, one whose loop
// waits for a person, and one whose pull request waits for review.
func TestWriteAutopilotStatus(t *testing.T) {
	s := runfiles.AutopilotStatus{Running: true, PID: 4242, RunID: "20261122-100000", Source: "tk", Parallel: 3,
		Started: 4, Completed: 1, Failed: 0, Pending: 2,
		Active: []runfiles.SlotStatus{
			{Slot: "1", Task: "t-1", Title: "Add the API", Worktree: ".worktrees/t-1", Elapsed: "5m0s", Hat: "builder", Iteration: 2, Attempt: 1, LoopRunning: true},
			{Slot: "2", Task: "t-2", Title: "Fix the parser", Worktree: ".worktrees/t-2", Elapsed: "3m0s", Hat: "reviewer", Iteration: 4, Attempt: 1, LoopRunning: true, Worker: "build-3"},
			{Slot: "3", Task: "t-4", Title: "Write the docs", Worktree: ".worktrees/t-4", Elapsed: "1m0s", Attempt: 1, Worker: "build-7"},
			{Slot: "4", Task: "t-5", Title: "Pick a database", Worktree: ".worktrees/t-5", Elapsed: "2m0s", Iteration: 1, Attempt: 1, LoopRunning: true,
				Waiting:    &runfiles.Question{ID: "q-3fa9c1", Text: "Which database?\x1b[31m", Options: []string{"postgres", "sqlite"}, Hat: "builder"},
				AnswerWith: runfiles.AnswerCommand("t-5", "q-3fa9c1")},
		},
		MergeQueue: []runfiles.TaskMerge{{TaskSlot: runfiles.TaskSlot{Task: "t-3"}, Step: runfiles.MergeQueued}},
		Reviews: []runfiles.TaskReview{{TaskSlot: runfiles.TaskSlot{Task: "t-6", Title: "Export CSV"},
			PR: runfiles.PullRequest{Number: 12, URL: "https://github.com/acme/app/pull/12", Head: "0123456789abcdef"}}}}
	var b strings.Builder
	WriteAutopilotStatus(&b, s)
	golden.Assert(t, "testdata/autopilot/status.golden", b.String())
}

// A task's start says where its loop runs, and how to attach to it; one
// that could not start is told apart from one whose loop failed.
func TestAutopilotTaskLinesSayWhereAndHow(t *testing.T) {
	text := func(topic string, p runfiles.AutopilotPayload) string {
		return AutopilotEventText(events.Event{Topic: topic, Payload: events.ObjectPayload(p)})
	}
	assert.Equal(t, "slot 1: T-1 (Fix) → .worktrees/T-1; watch it with `ralph watch --task T-1`",
		text(runfiles.TopicTaskAssigned, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Slot: "1", Worktree: ".worktrees/T-1", Branch: "ralph/T-1"}))
	assert.Equal(t, "slot 2: T-1 (Fix) → a worker, on branch ralph/T-1 (attempt 2); watch it with `ralph watch --task T-1`",
		text(runfiles.TopicTaskAssigned, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Slot: "2", Worktree: ".worktrees/T-1",
			RunsOn: "a worker", Branch: "ralph/T-1", Attempt: 2}))
	assert.Equal(t, "not started: T-1 (Fix): claiming it in tk failed: locked",
		text(runfiles.TopicTaskAssignFailed, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Reason: "claiming it in tk failed: locked"}))
	assert.Equal(t, "failed: T-1 (Fix): its loop exited 1 (stuck)",
		text(runfiles.TopicTaskFailed, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Reason: "its loop exited 1 (stuck)"}))
}

// A delivery's lines say where the work went: the remote's branch, the
// pull request and its merge.
func TestAutopilotDeliveryLines(t *testing.T) {
	text := func(topic string, p runfiles.AutopilotPayload) string {
		return AutopilotEventText(events.Event{Topic: topic, Payload: events.ObjectPayload(p)})
	}
	commit := "0123456789abcdef0123"
	assert.Equal(t, "pushed T-1's merge 0123456789ab to origin/main",
		text(runfiles.TopicMergePushed, runfiles.AutopilotPayload{Task: "T-1", Commit: commit, Remote: "origin", Branch: "main"}))
	assert.Equal(t, "pushed T-1's merge 0123456789ab to origin as ralph/T-1",
		text(runfiles.TopicMergePushed, runfiles.AutopilotPayload{Task: "T-1", Commit: commit, Remote: "origin", Branch: "ralph/T-1"}))
	assert.Equal(t, "T-1 (Fix): pull request #4 waits for review: https://forge.test/pull/4 (head 0123456789ab)",
		text(runfiles.TopicTaskPROpened, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Number: 4, URL: "https://forge.test/pull/4", Commit: commit}))
	assert.Equal(t, "T-1 (Fix): pull request #4 no longer merges onto its base; merging it again on the base's new tip",
		text(runfiles.TopicTaskPRConflicted, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Number: 4, Commit: commit}))
	assert.Equal(t, "completed: T-1 (Fix), pull request #4 (https://forge.test/pull/4) at 0123456789ab",
		text(runfiles.TopicTaskCompleted, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Number: 4, URL: "https://forge.test/pull/4", Commit: commit}))
	assert.Equal(t, "completed: T-1 (Fix), merged as 0123456789ab",
		text(runfiles.TopicTaskCompleted, runfiles.AutopilotPayload{Task: "T-1", Title: "Fix", Commit: commit}))
}

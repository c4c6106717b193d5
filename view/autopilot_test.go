package view

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/events"
)

// A task's start says where its loop runs, and how to attach to it; one
// that could not start is told apart from one whose loop failed.
func TestAutopilotTaskLinesSayWhereAndHow(t *testing.T) {
	text := func(topic string, p autopilot.Payload) string {
		return AutopilotEventText(events.Event{Topic: topic, Payload: events.ObjectPayload(p)})
	}
	assert.Equal(t, "slot 1: T-1 (Fix) → .worktrees/T-1; watch it with `ralph watch --task T-1`",
		text(autopilot.TopicTaskAssigned, autopilot.Payload{Task: "T-1", Title: "Fix", Slot: "1", Worktree: ".worktrees/T-1", Branch: "ralph/T-1"}))
	assert.Equal(t, "slot 2: T-1 (Fix) → a worker, on branch ralph/T-1 (attempt 2); watch it with `ralph watch --task T-1`",
		text(autopilot.TopicTaskAssigned, autopilot.Payload{Task: "T-1", Title: "Fix", Slot: "2", Worktree: ".worktrees/T-1",
			RunsOn: "a worker", Branch: "ralph/T-1", Attempt: 2}))
	assert.Equal(t, "not started: T-1 (Fix): claiming it in tk failed: locked",
		text(autopilot.TopicTaskAssignFailed, autopilot.Payload{Task: "T-1", Title: "Fix", Reason: "claiming it in tk failed: locked"}))
	assert.Equal(t, "failed: T-1 (Fix): its loop exited 1 (stuck)",
		text(autopilot.TopicTaskFailed, autopilot.Payload{Task: "T-1", Title: "Fix", Reason: "its loop exited 1 (stuck)"}))
}

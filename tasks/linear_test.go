package tasks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	linearfake "github.com/ralph-loop/ralph/internal/fakeforge/linear"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/tasks"
)

const linearKey = "lin_api_tasksTestKey0123456789"

func TestALinearSourceWorksThroughATeamsIssues(t *testing.T) {
	f := linearfake.New(t, linearKey)
	f.AddTeam("ENG", "Engineering")
	low := f.AddIssue("ENG", linearfake.Issue{Title: "Low", Priority: 4, Labels: []string{"ralph"}})
	urgent := f.AddIssue("ENG", linearfake.Issue{Title: "Urgent", Priority: 1, Labels: []string{"ralph"},
		Description: "Fix it.\n\n## Acceptance criteria\n- `go test ./...`"})
	waits := f.AddIssue("ENG", linearfake.Issue{Title: "Waits", Priority: 1, Labels: []string{"ralph"}})
	labelled := f.AddIssue("ENG", linearfake.Issue{Title: "P0 by label", Labels: []string{"ralph", "P0"}})
	none := f.AddIssue("ENG", linearfake.Issue{Title: "No priority", Labels: []string{"ralph"}})
	f.Block(urgent, waits)
	t.Setenv("RALPH_TEST_LINEAR_KEY", linearKey)

	src, err := tasks.Open(tasks.Spec{Type: "linear", Team: "ENG", Labels: []string{"ralph"}, TokenEnv: "RALPH_TEST_LINEAR_KEY", APIURL: f.URL}, t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "linear", src.Name())
	ctx := t.Context()
	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{urgent, labelled, none, low}, ids(ready), "urgent and P0 first (oldest first), then the default 2, then low")
	assert.Equal(t, []tasks.Criterion{{Text: "`go test ./...`", Command: "go test ./..."}}, ready[0].Criteria)
	blocked, err := src.(tasks.Blocker).Blocked(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{waits}, ids(blocked))

	require.NoError(t, src.Claim(ctx, urgent))
	assert.Equal(t, f.Viewer(), f.Issue(urgent).Assignee)
	require.NoError(t, src.Close(ctx, urgent, "merged into main by ralph autopilot as abc1234"))
	assert.Equal(t, "Done", f.Issue(urgent).State)
	assert.Equal(t, []string{"ralph is working on this.", "Done by ralph: merged into main by ralph autopilot as abc1234"}, f.Comments(urgent))
	ready, err = src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{waits, labelled, none, low}, ids(ready), "closing its blocker readies the issue that waited")

	require.NoError(t, src.Claim(ctx, low))
	require.NoError(t, src.Fail(ctx, low, "verification failed"))
	assert.Empty(t, f.Issue(low).Assignee)
	assert.Equal(t, "Todo", f.Issue(low).State)
	assert.Equal(t, []string{"ralph is working on this.", "ralph gave up on this: verification failed"}, f.Comments(low))
}

func TestALinearSourceWithoutItsKeySaysWhichVariable(t *testing.T) {
	t.Setenv("RALPH_TEST_LINEAR_KEY", "")
	_, err := tasks.Open(tasks.Spec{Type: "linear", Team: "ENG", TokenEnv: "RALPH_TEST_LINEAR_KEY"}, t.TempDir())
	require.ErrorContains(t, err, "linear: $RALPH_TEST_LINEAR_KEY is not set")
	assert.Contains(t, hint.Of(err), "export RALPH_TEST_LINEAR_KEY=")
}

package tasks_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/forgetest"
	"github.com/ralph-loop/ralph/tasks"
)

func backlog() *forgetest.Forge {
	f := forgetest.New("ralph-bot")
	f.Add(forge.Issue{ID: "1", Title: "Low", Labels: []string{"ralph", "P3"}, Priority: -1})
	f.Add(forge.Issue{ID: "2", Title: "Urgent", Labels: []string{"ralph", "P0"}, Priority: -1,
		Body: "Fix it.\n\n## Acceptance criteria\n- [ ] `go test ./...`\n- the page loads\n\n## Notes\nkeep it small"})
	f.Add(forge.Issue{ID: "3", Title: "Waits for 2", Labels: []string{"ralph", "P0"}, Priority: -1, BlockedBy: []string{"2"}})
	f.Add(forge.Issue{ID: "4", Title: "Someone else's", Labels: []string{"ralph"}, Priority: -1, Assignees: []string{"alice"}})
	f.Add(forge.Issue{ID: "5", Title: "Mine already", Labels: []string{"ralph"}, Priority: 1, Assignees: []string{"ralph-bot"}})
	f.Add(forge.Issue{ID: "6", Title: "No priority", Labels: []string{"ralph"}, Priority: -1})
	return f
}

func ids(ts []tasks.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestAForgeSourceListsReadyIssuesInPriorityOrder(t *testing.T) {
	src := tasks.NewForgeSource("github", backlog(), "")
	ready, err := src.Ready(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"2", "5", "6", "1"}, ids(ready),
		"P0 first, then the tracker's priority 1, then the default 2, then P3; blocked and others' issues wait")
	assert.Equal(t, "Fix it.\n\n## Notes\nkeep it small", ready[0].Description)
	assert.Equal(t, []tasks.Criterion{{Text: "`go test ./...`", Command: "go test ./..."}, {Text: "the page loads"}}, ready[0].Criteria)

	blocked, err := src.(tasks.Blocker).Blocked(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"3"}, ids(blocked), "someone else's issue is not ralph's, nor blocked")
	assert.Equal(t, []string{"2"}, blocked[0].Deps)
}

func TestAForgeSourceClaimsClosesAndFails(t *testing.T) {
	f := backlog()
	src := tasks.NewForgeSource("github", f, "")
	ctx := context.Background()
	require.NoError(t, src.Claim(ctx, "2"))
	require.NoError(t, src.Claim(ctx, "2"), "a claim repeated after a restart")
	require.NoError(t, src.Close(ctx, "2", "merged as abc123 into main"))
	require.NoError(t, src.Close(ctx, "2", "merged as abc123 into main"))
	require.NoError(t, src.Claim(ctx, "6"))
	require.NoError(t, src.Fail(ctx, "6", "verification of the merged result failed"))
	assert.Equal(t, []string{
		"assign 2 ralph-bot", "comment 2: ralph is working on this.",
		"comment 2: Done by ralph: merged as abc123 into main", "close 2",
		"assign 6 ralph-bot", "comment 6: ralph is working on this.",
		"comment 6: ralph gave up on this: verification of the merged result failed", "unassign 6 ralph-bot",
	}, f.Calls(), "each change is made once")

	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "5", "6", "1"}, ids(ready), "3 is ready once 2 is closed")
}

func TestAForgeSourceShowsAnyIssueAndKnowsAMissingOne(t *testing.T) {
	src := tasks.NewForgeSource("gitlab", backlog(), "")
	_, err := src.Show(context.Background(), "99")
	require.ErrorIs(t, err, tasks.ErrNoTask)
	task, err := src.Show(context.Background(), "4")
	require.NoError(t, err)
	assert.Equal(t, "Someone else's", task.Title)
}

func TestAForgeSourceTakesTheConfiguredUsersIssues(t *testing.T) {
	src := tasks.NewForgeSource("linear", backlog(), "alice")
	ready, err := src.Ready(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"2", "4", "6", "1"}, ids(ready), "ties in the tracker's order")
}

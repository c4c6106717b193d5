package tasks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/gitlab"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/tasks"
)

func TestAGitLabSourceWorksThroughLabelledIssues(t *testing.T) {
	srv := fake.Start(t, fake.Options{Project: "acme/web-app", Token: "glpat-tasks-test-token", Premium: true})
	t.Setenv("ACME_GITLAB_TOKEN", "glpat-tasks-test-token")
	low := srv.AddIssue(fake.NewIssue{Title: "Low", Labels: []string{"ralph", "P1"}})
	urgent := srv.AddIssue(fake.NewIssue{Title: "Urgent", Labels: []string{"ralph", "P0"},
		Description: "Fix it.\n\n## Acceptance criteria\n- [ ] `go test ./...`\n"})
	next := srv.AddIssue(fake.NewIssue{Title: "After urgent", Labels: []string{"ralph", "priority::0"}})
	srv.AddIssue(fake.NewIssue{Title: "Not ralph's", Labels: []string{"P0"}})
	srv.Block(next, urgent)

	src, err := tasks.Open(tasks.Spec{Type: "gitlab", Project: "acme/web-app", APIURL: srv.URL, TokenEnv: "ACME_GITLAB_TOKEN",
		Labels: []string{"ralph"}}, t.TempDir())
	require.NoError(t, err)
	ready, err := src.Ready(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"2", "1"}, taskIDs(ready), "P0 before P1; the one blocked by an open issue waits")
	assert.Equal(t, []tasks.Criterion{{Text: "`go test ./...`", Command: "go test ./..."}}, ready[0].Criteria)
	blocked, err := src.(tasks.Blocker).Blocked(t.Context())
	require.NoError(t, err)
	require.Len(t, blocked, 1)
	assert.Equal(t, []string{"2"}, blocked[0].Deps)

	ctx := t.Context()
	require.NoError(t, src.Claim(ctx, "2"))
	require.NoError(t, src.Close(ctx, "2", "merged as 1a2b3c4 into main"))
	require.NoError(t, src.Claim(ctx, "1"))
	require.NoError(t, src.Fail(ctx, "1", "verification of the merged result failed"))
	assert.Equal(t, fake.IssueState{State: "closed", Labels: []string{"ralph", "P0"}, Assignees: []string{"ralph-bot"},
		Notes: []string{"ralph is working on this.", "Done by ralph: merged as 1a2b3c4 into main"}}, srv.Issue(urgent))
	assert.Equal(t, fake.IssueState{State: "opened", Labels: []string{"ralph", "P1"},
		Notes: []string{"ralph is working on this.", "ralph gave up on this: verification of the merged result failed"}}, srv.Issue(low))

	ready, err = src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "1"}, taskIDs(ready), "3 is ready once 2 is closed, and its scoped label priority::0 is P0")
}

func TestAGitLabSourceNeedsItsToken(t *testing.T) {
	t.Setenv("ACME_GITLAB_TOKEN", "")
	_, err := tasks.Open(tasks.Spec{Type: "gitlab", Project: "acme/web-app", TokenEnv: "ACME_GITLAB_TOKEN"}, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$ACME_GITLAB_TOKEN is not set")
	assert.Contains(t, hint.Of(err), "export ACME_GITLAB_TOKEN=")
}

func taskIDs(ts []tasks.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

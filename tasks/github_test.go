package tasks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/github"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/tasks"
)

func TestAGitHubSourceWorksThroughTheRepositorysIssues(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: "ghp_test", User: "ralph-bot"})
	low := srv.AddIssue(fake.Issue{Title: "Low", Labels: []string{"ralph", "P3"}})
	urgent := srv.AddIssue(fake.Issue{Title: "Urgent", Labels: []string{"ralph", "P0"}, Body: "Fix it.\n\n## Acceptance criteria\n- the page loads"})
	waits := srv.AddIssue(fake.Issue{Title: "Waits", Labels: []string{"ralph", "P0"}})
	srv.AddIssue(fake.Issue{Title: "Not ours", Labels: []string{"other"}})
	srv.AddIssue(fake.Issue{Title: "Theirs", Labels: []string{"ralph"}, Assignees: []string{"alice"}})
	require.NoError(t, srv.Block(waits, low))
	t.Setenv("ACME_GITHUB_TOKEN", "ghp_test")
	src, err := tasks.Open(tasks.Spec{Type: "github", Repo: "acme/widgets", Labels: []string{"ralph"},
		TokenEnv: "ACME_GITHUB_TOKEN", APIURL: srv.URL()}, t.TempDir())
	require.NoError(t, err)
	ctx := t.Context()

	ready, err := src.Ready(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{urgent, low}, ids(ready))
	assert.Equal(t, []tasks.Criterion{{Text: "the page loads"}}, ready[0].Criteria)
	blocked, err := src.(tasks.Blocker).Blocked(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{waits}, ids(blocked), "someone else's issue is neither ready nor blocked: it is not ralph's")
	assert.Equal(t, []string{low}, blocked[0].Deps)

	require.NoError(t, src.Claim(ctx, urgent))
	require.NoError(t, src.Close(ctx, urgent, "merged into main by ralph autopilot as abc1234"))
	require.NoError(t, src.Claim(ctx, low))
	require.NoError(t, src.Fail(ctx, low, "verification of the merged result failed"))
	is, _ := srv.Issue(urgent)
	assert.Equal(t, "closed", is.State)
	assert.Equal(t, []string{"ralph is working on this.", "Done by ralph: merged into main by ralph autopilot as abc1234"}, srv.Comments(urgent))
	is, _ = srv.Issue(low)
	assert.Equal(t, "open", is.State)
	assert.Empty(t, is.Assignees, "a failed task is unassigned")
	assert.Equal(t, []string{"ralph is working on this.", "ralph gave up on this: verification of the merged result failed"}, srv.Comments(low))
}

func TestAGitHubSourceSaysWhatItLacks(t *testing.T) {
	_, err := tasks.Open(tasks.Spec{Type: "github", TokenEnv: "GITHUB_TOKEN"}, t.TempDir())
	assert.ErrorContains(t, err, "autopilot.source github: repo is required")

	t.Setenv("RALPH_TEST_UNSET_TOKEN", "")
	_, err = tasks.Open(tasks.Spec{Type: "github", Repo: "acme/widgets", TokenEnv: "RALPH_TEST_UNSET_TOKEN"}, t.TempDir())
	assert.ErrorContains(t, err, "$RALPH_TEST_UNSET_TOKEN is not set")
	assert.Contains(t, hint.Of(err), "export RALPH_TEST_UNSET_TOKEN=")

	_, err = tasks.Open(tasks.Spec{Type: "github", Repo: "widgets", TokenEnv: "PATH"}, t.TempDir())
	assert.ErrorContains(t, err, `repository "widgets" is not owner/name`)
}

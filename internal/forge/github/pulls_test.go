package github_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/github"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestOpeningAPullRequestTwiceOpensOneAndLabelsIt(t *testing.T) {
	remote := newRemote(t)
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token, Git: remote.url})
	sha := remote.branch(t, "ralph/7", "seven.txt")
	c, _ := newClient(t, srv)
	change := forge.Change{Head: "ralph/7", Base: "main", Title: "Add seven (7)", Body: "Closes #7", Labels: []string{"ralph", "autopilot"}}

	pr, err := c.Pulls().Open(t.Context(), change)
	require.NoError(t, err)
	assert.Equal(t, forge.PullRequest{Number: 1, URL: srv.WebURL() + "/acme/widgets/pull/1", State: forge.StateOpen,
		Head: "ralph/7", Base: "main", HeadSHA: sha}, pr)
	again, err := c.Pulls().Open(t.Context(), change)
	require.NoError(t, err)
	assert.Equal(t, pr, again, "the open one is found, not a second opened")

	prs := srv.PRs()
	require.Len(t, prs, 1)
	assert.Equal(t, []string{"ralph", "autopilot"}, prs[0].Labels)
	assert.Equal(t, "Add seven (7)", prs[0].Title)
	assert.Equal(t, "Closes #7", prs[0].Body)
	var creates, finds int
	for _, r := range srv.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/pulls") {
			creates++
		}
		if r.Method == "GET" && strings.Contains(r.Path, "/pulls?") {
			finds++
			assert.Contains(t, r.Path, "head=acme%3Aralph%2F7", "the list filters by owner:branch")
			assert.Contains(t, r.Path, "base=main")
		}
	}
	assert.Equal(t, 1, creates)
	assert.Equal(t, 2, finds)

	_, err = c.Pulls().Open(t.Context(), forge.Change{Head: "ralph/nothing", Base: "main", Title: "no branch"})
	assert.ErrorContains(t, err, "Validation Failed", "GitHub refuses a head that is not a branch")
}

func TestGetFollowsAPullRequestAsPeopleMergeCloseAndConflictWithIt(t *testing.T) {
	remote := newRemote(t)
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token, Git: remote.url})
	issue := srv.AddIssue(fake.Issue{Title: "add eight"}) // #1
	remote.branch(t, "ralph/7", "seven.txt")
	remote.branch(t, "ralph/8", "eight.txt")
	c, _ := newClient(t, srv)
	ctx := t.Context()
	seven, err := c.Pulls().Open(ctx, forge.Change{Head: "ralph/7", Base: "main", Title: "seven"})
	require.NoError(t, err)
	eight, err := c.Pulls().Open(ctx, forge.Change{Head: "ralph/8", Base: "main", Title: "eight", Body: "Adds eight.\n\nCloses #" + issue})
	require.NoError(t, err)

	got, err := c.Pulls().Get(ctx, seven.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateOpen, got.State)
	assert.False(t, got.Conflicts)

	_, err = srv.PushToBase("main", "seven.txt", "someone else's seven\n", "someone else adds seven.txt")
	require.NoError(t, err)
	got, err = c.Pulls().Get(ctx, seven.Number)
	require.NoError(t, err)
	assert.True(t, got.Conflicts, "both add seven.txt, differently")
	_, err = srv.MergePR(seven.Number)
	assert.ErrorContains(t, err, "conflicts", "a person cannot merge it either")

	merge, err := srv.MergePR(eight.Number)
	require.NoError(t, err)
	got, err = c.Pulls().Get(ctx, eight.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateMerged, got.State)
	assert.Equal(t, merge, got.MergeCommit)
	assert.Equal(t, merge, gittest.Run(t, remote.url, "rev-parse", "main"), "the merge is on main in the remote")
	assert.Equal(t, "eight.txt\nseven.txt", gittest.Run(t, remote.url, "ls-tree", "--name-only", "main", "--", "eight.txt", "seven.txt"))
	closed, _ := srv.Issue(issue)
	assert.Equal(t, "closed", closed.State, "its body's closing keyword closed the issue, as GitHub does")

	require.NoError(t, srv.ClosePR(seven.Number))
	got, err = c.Pulls().Get(ctx, seven.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateClosed, got.State)
	assert.Empty(t, got.MergeCommit)

	_, err = c.Pulls().Get(ctx, 99)
	assert.ErrorIs(t, err, forge.ErrNotFound)
	_, err = c.Pulls().Get(ctx, 1)
	assert.ErrorIs(t, err, forge.ErrNotFound, "#1 is an issue")
}

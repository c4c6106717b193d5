package gitlab_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/gitlab"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/gitlab"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// remote is a bare repository with main, and a clone of it with branch
// ralph/1 pushed: one commit that adds one.txt.
func remote(t *testing.T) (bare, clone string) {
	t.Helper()
	bare, _ = gittest.SharedRemote(t)
	clone = filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, t.TempDir(), "clone", "-q", bare, clone)
	gittest.Run(t, clone, "checkout", "-q", "-b", "ralph/1")
	gittest.CommitFile(t, clone, "one.txt", "one\n", "task one")
	gittest.Run(t, clone, "push", "-q", "origin", "ralph/1")
	return bare, clone
}

var change = forge.Change{Head: "ralph/1", Base: "main", Title: "Task one (1)", Body: "Closes #1\n\nWhat ralph did.",
	Labels: []string{"ralph", "needs-review"}}

func TestOpenOpensOneMergeRequestAndFindsItAgain(t *testing.T) {
	bare, clone := remote(t)
	srv, c := project(t, fake.Options{Repo: bare})
	prs := c.Pulls()
	pr, err := prs.Open(t.Context(), change)
	require.NoError(t, err)
	head := gittest.Run(t, clone, "rev-parse", "HEAD")
	assert.Equal(t, forge.PullRequest{Number: 1, URL: srv.URL + "/acme/web-app/-/merge_requests/1", State: forge.StateOpen,
		Head: "ralph/1", Base: "main", HeadSHA: head}, pr)
	mr := srv.MR(1)
	assert.Equal(t, "Task one (1)", mr.Title)
	assert.Equal(t, change.Body, mr.Description)
	assert.Equal(t, []string{"ralph", "needs-review"}, mr.Labels)

	again, err := prs.Open(t.Context(), change)
	require.NoError(t, err)
	assert.Equal(t, pr, again, "the open merge request from ralph/1 into main")
	assert.Equal(t, 1, srv.MRs())
	assert.Len(t, srv.Writes(), 1, "one merge request made")
}

func TestOpenFindsTheMergeRequestGitLabSaysIsThereAlready(t *testing.T) {
	bare, _ := remote(t)
	var srv *fake.Server
	srv, _ = project(t, fake.Options{Repo: bare})
	other := client(t, srv, gitlab.Options{})
	// Another ralph opens the same merge request between this one's look
	// and its request: GitLab answers 409, and the one there is the one.
	c := client(t, srv, gitlab.Options{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			_, err := other.Pulls().Open(r.Context(), change)
			require.NoError(t, err)
		}
		return http.DefaultTransport.RoundTrip(r)
	})})
	pr, err := c.Pulls().Open(t.Context(), change)
	require.NoError(t, err)
	assert.Equal(t, 1, pr.Number)
	assert.Equal(t, 1, srv.MRs())
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestGetFollowsAMergeRequestThroughConflictsToItsMerge(t *testing.T) {
	bare, clone := remote(t)
	srv, c := project(t, fake.Options{Repo: bare})
	iid := srv.AddIssue(fake.NewIssue{Title: "Task one", Labels: []string{"ralph"}})
	prs := c.Pulls()
	opened, err := prs.Open(t.Context(), change)
	require.NoError(t, err)

	srv.CommitToBranch("main", "one.txt", "someone else's one\n", "someone else")
	pr, err := prs.Get(t.Context(), opened.Number)
	require.NoError(t, err)
	assert.True(t, pr.Conflicts, "main changed one.txt too")
	assert.Equal(t, forge.StateOpen, pr.State)

	gittest.Run(t, clone, "fetch", "-q", "origin")
	gittest.Run(t, clone, "reset", "-q", "--hard", "origin/main")
	rebased := gittest.CommitFile(t, clone, "one.txt", "someone else's one\nand ralph's\n", "task one, again")
	gittest.Run(t, clone, "push", "-q", "--force", "origin", "HEAD:ralph/1")
	pr, err = prs.Get(t.Context(), opened.Number)
	require.NoError(t, err)
	assert.False(t, pr.Conflicts)
	assert.Equal(t, rebased, pr.HeadSHA, "GitLab follows the pushed branch")

	commit := srv.MergeMR(opened.Number)
	pr, err = prs.Get(t.Context(), opened.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateMerged, pr.State)
	assert.Equal(t, commit, pr.MergeCommit)
	assert.Equal(t, commit, gittest.Run(t, bare, "rev-parse", "main"), "the merge commit is on main")
	assert.Equal(t, rebased, gittest.Run(t, bare, "rev-parse", "main^2"))
	assert.Equal(t, "closed", srv.Issue(iid).State, "GitLab closes the issue the description closes, merged into the default branch")
}

func TestGetSaysAClosedOrMissingMergeRequest(t *testing.T) {
	bare, _ := remote(t)
	srv, c := project(t, fake.Options{Repo: bare})
	opened, err := c.Pulls().Open(t.Context(), change)
	require.NoError(t, err)
	srv.CloseMR(opened.Number)
	pr, err := c.Pulls().Get(t.Context(), opened.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.StateClosed, pr.State)
	assert.Empty(t, pr.MergeCommit)

	_, err = c.Pulls().Get(t.Context(), 7)
	require.ErrorIs(t, err, forge.ErrNotFound)
}

func TestOpenSaysWhyGitLabRefusedAMergeRequest(t *testing.T) {
	bare, _ := remote(t)
	_, c := project(t, fake.Options{Repo: bare})
	_, err := c.Pulls().Open(t.Context(), forge.Change{Head: "ralph/nope", Base: "main", Title: "Nope"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `gitlab: open a merge request from ralph/nope into main in acme/web-app`)
	assert.Contains(t, err.Error(), `Branch "ralph/nope" does not exist`)
}

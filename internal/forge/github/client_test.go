package github_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/github"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/github"
	"github.com/ralph-loop/ralph/internal/hint"
)

const token = "ghp_fake-token-for-tests"

// waits records what a client's Waiter was told.
type waits struct {
	mu   sync.Mutex
	told []string
}

func (w *waits) wait(d time.Duration, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.told = append(w.told, fmt.Sprintf("%s: %s", d.Round(time.Second), why))
}

func (w *waits) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.told...)
}

func newClient(t *testing.T, srv *fake.Server, labels ...string) (*github.Client, *waits) {
	t.Helper()
	w := &waits{}
	c, err := github.New(github.Options{Repo: "acme/widgets", APIURL: srv.URL(), Token: token, Labels: labels, Wait: w.wait})
	require.NoError(t, err)
	return c, w
}

func ids(issues []forge.Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	return out
}

// paths are the requests' paths without their queries.
func paths(reqs []fakeRequest) []string {
	var out []string
	for _, r := range reqs {
		p, _, _ := strings.Cut(r.Path, "?")
		out = append(out, r.Method+" "+p)
	}
	return out
}

type fakeRequest = struct{ Method, Path, Body string }

func requests(srv *fake.Server) []fakeRequest {
	var out []fakeRequest
	for _, r := range srv.Requests() {
		out = append(out, fakeRequest{r.Method, r.Path, r.Body})
	}
	return out
}

func TestOpenListsTheLabelledOpenIssuesOldestFirstOnEveryPage(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	var want []string
	for i := range 130 {
		labels := []string{"ralph"}
		if i%10 == 3 {
			labels = []string{"other"} // not selected
		}
		id := srv.AddIssue(fake.Issue{Title: fmt.Sprintf("task %d", i), Labels: labels})
		if i%10 != 3 {
			want = append(want, id)
		}
	}
	closed := srv.AddIssue(fake.Issue{Title: "done", Labels: []string{"ralph"}, State: "closed"})
	c, _ := newClient(t, srv, "ralph")

	open, err := c.Open(t.Context())
	require.NoError(t, err)
	assert.Equal(t, want, ids(open), "every labelled open issue, oldest first, across pages")
	assert.NotContains(t, ids(open), closed)
	assert.Equal(t, -1, open[0].Priority, "GitHub has no priority field")
	assert.True(t, open[0].Open)
	assert.Equal(t, srv.WebURL()+"/acme/widgets/issues/1", open[0].URL)

	reqs := requests(srv)
	require.Equal(t, 2, len(reqs), "two pages of 100, and nothing asked of issues that wait for nothing: %v", paths(reqs))
	assert.Contains(t, reqs[0].Path, "labels=ralph")
	assert.Contains(t, reqs[0].Path, "sort=created")
	assert.Contains(t, reqs[0].Path, "direction=asc")
	assert.Contains(t, reqs[0].Path, "per_page=100")
	assert.Contains(t, reqs[1].Path, "page=2")
	assert.Empty(t, srv.Writes())
}

func TestOpenLeavesOutPullRequestsWhichTheIssuesAPIListsToo(t *testing.T) {
	remote := newRemote(t)
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token, Git: remote.url})
	issue := srv.AddIssue(fake.Issue{Title: "a task", Labels: []string{"ralph"}})
	remote.branch(t, "ralph/1", "one.txt")
	c, _ := newClient(t, srv, "ralph")
	pr, err := c.Pulls().Open(t.Context(), forge.Change{Head: "ralph/1", Base: "main", Title: "a task (1)", Labels: []string{"ralph"}})
	require.NoError(t, err)

	open, err := c.Open(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{issue}, ids(open), "pull request #%d has the label, and is no issue", pr.Number)
	_, err = c.Issue(t.Context(), fmt.Sprint(pr.Number))
	assert.ErrorIs(t, err, forge.ErrNotFound, "a pull request's number is no issue's")
}

func TestAnIssueWaitsForItsOpenBlockersAndSubIssues(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	label := []string{"ralph"}
	free := srv.AddIssue(fake.Issue{Title: "free", Labels: label})
	base := srv.AddIssue(fake.Issue{Title: "base", Labels: label})
	after := srv.AddIssue(fake.Issue{Title: "after base", Labels: label})
	done := srv.AddIssue(fake.Issue{Title: "done", State: "closed"})
	afterDone := srv.AddIssue(fake.Issue{Title: "after done", Labels: label})
	parent := srv.AddIssue(fake.Issue{Title: "parent", Labels: label})
	child := srv.AddIssue(fake.Issue{Title: "child"})
	closedChild := srv.AddIssue(fake.Issue{Title: "closed child", State: "closed"})
	upstream := srv.AddIssue(fake.Issue{Repo: "acme/lib", Title: "upstream"})
	downstream := srv.AddIssue(fake.Issue{Title: "waits for acme/lib", Labels: label})
	require.NoError(t, srv.Block(after, base))
	require.NoError(t, srv.Block(afterDone, done))
	require.NoError(t, srv.AddSubIssue(parent, child))
	require.NoError(t, srv.AddSubIssue(parent, closedChild))
	require.NoError(t, srv.Block(downstream, upstream))
	assert.Equal(t, "acme/lib#1", upstream)
	c, _ := newClient(t, srv, "ralph")

	open, err := c.Open(t.Context())
	require.NoError(t, err)
	blockers := map[string][]string{}
	for _, is := range open {
		blockers[is.ID] = is.BlockedBy
	}
	assert.Equal(t, map[string][]string{free: nil, base: nil, after: {base}, afterDone: nil, parent: {child},
		downstream: {"acme/lib#1"}}, blockers, "closed blockers and sub-issues block nothing; one in another repository does")
	for _, p := range paths(requests(srv)) {
		assert.NotContains(t, p, "/issues/"+free+"/", "nothing is asked of an issue whose summaries say it waits for nothing")
		assert.NotContains(t, p, "/issues/"+afterDone+"/sub_issues")
	}

	require.NoError(t, srv.CloseIssue(base))
	is, err := c.Issue(t.Context(), after)
	require.NoError(t, err)
	assert.Empty(t, is.BlockedBy, "its blocker closed")
}

func TestIssueReadsOneIssueOpenOrNot(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	id := srv.AddIssue(fake.Issue{Title: "Fix it", Body: "the body", Labels: []string{"ralph", "P1"}, Assignees: []string{"alice"}})
	c, _ := newClient(t, srv)

	is, err := c.Issue(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, forge.Issue{ID: id, Title: "Fix it", Body: "the body", URL: srv.WebURL() + "/acme/widgets/issues/" + id, Open: true,
		Labels: []string{"ralph", "P1"}, Assignees: []string{"alice"}, Priority: -1}, is)
	require.NoError(t, srv.CloseIssue(id))
	is, err = c.Issue(t.Context(), "#"+id)
	require.NoError(t, err)
	assert.False(t, is.Open)

	_, err = c.Issue(t.Context(), "99")
	assert.ErrorIs(t, err, forge.ErrNotFound)
	_, err = c.Issue(t.Context(), "ENG-1")
	assert.ErrorIs(t, err, forge.ErrNotFound)
}

func TestClaimCommentCloseAndReopenChangeTheIssue(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token, User: "ralph-bot"})
	id := srv.AddIssue(fake.Issue{Title: "a task"})
	c, _ := newClient(t, srv)
	ctx := t.Context()

	me, err := c.Me(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ralph-bot", me)
	require.NoError(t, c.Assign(ctx, id, me))
	require.NoError(t, c.Assign(ctx, id, me), "assigning again changes nothing")
	require.NoError(t, c.Comment(ctx, id, "ralph is working on this."))
	is, _ := srv.Issue(id)
	assert.Equal(t, []string{"ralph-bot"}, is.Assignees)

	require.NoError(t, c.Close(ctx, id))
	is, _ = srv.Issue(id)
	assert.Equal(t, "closed", is.State)
	assert.Equal(t, "completed", is.StateReason)
	require.NoError(t, c.Close(ctx, id), "closing a closed issue changes nothing")

	require.NoError(t, c.Reopen(ctx, id))
	require.NoError(t, c.Unassign(ctx, id, me))
	require.NoError(t, c.Unassign(ctx, id, me), "unassigning again changes nothing")
	is, _ = srv.Issue(id)
	assert.Equal(t, "open", is.State)
	assert.Equal(t, "reopened", is.StateReason)
	assert.Empty(t, is.Assignees)
	assert.Equal(t, []string{"ralph is working on this."}, srv.Comments(id))

	err = c.Comment(ctx, "42", "no such issue")
	assert.ErrorIs(t, err, forge.ErrNotFound)
}

func TestAssigningSomeoneGitHubWillNotIsAnError(t *testing.T) {
	// GitHub answers 201 and leaves out an assignee without access.
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token, User: "ralph-bot", Collaborators: []string{"alice"}})
	id := srv.AddIssue(fake.Issue{Title: "a task"})
	c, _ := newClient(t, srv)
	require.NoError(t, c.Assign(t.Context(), id, "alice"))
	err := c.Assign(t.Context(), id, "mallory")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not assign #1 of acme/widgets to mallory")
	assert.Contains(t, hint.Of(err), "give mallory access")
}

func TestATokenGitHubRefusesSaysSo(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: "the-right-one"})
	c, _ := newClient(t, srv)
	_, err := c.Open(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GitHub refused the token")
	assert.Contains(t, hint.Of(err), "token_env")
	assert.NotContains(t, err.Error(), token)
}

func TestARateLimitIsWaitedOutAndTold(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	srv.AddIssue(fake.Issue{Title: "a task", Labels: []string{"ralph"}})
	c, w := newClient(t, srv, "ralph")
	srv.RefuseNext(fake.PrimaryRateLimit(time.Now()), fake.SecondaryRateLimit(429, 1))

	start := time.Now()
	open, err := c.Open(t.Context())
	require.NoError(t, err)
	assert.Len(t, open, 1)
	told := w.all()
	require.Len(t, told, 2, "both refusals waited out: %v", told)
	assert.Contains(t, told[0], "answered 403, limit resets at")
	assert.Equal(t, "1s: GET /api/v3/repos/acme/widgets/issues answered 429, retry after 1", told[1])
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "the Retry-After second was waited")
	assert.Len(t, srv.Requests(), 3, "the same request, sent three times")
}

func TestARateLimitTooLongToWaitIsAnErrorNamingTheReset(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	c, w := newClient(t, srv)
	reset := time.Now().Add(time.Hour) // past the longest wait ralph takes
	srv.RefuseNext(fake.PrimaryRateLimit(reset))

	_, err := c.Me(t.Context())
	rl, ok := errors.AsType[*forge.RateLimitError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, reset.Unix(), rl.Reset.Unix())
	assert.Contains(t, err.Error(), "GitHub's rate limit: API rate limit exceeded")
	assert.NotEmpty(t, hint.Of(err))
	assert.Empty(t, w.all(), "no wait begun")

	// go-github remembers the limit: no request is sent until it resets.
	_, err = c.Me(t.Context())
	_, ok = errors.AsType[*forge.RateLimitError](err)
	assert.True(t, ok, "%v", err)
	assert.Len(t, srv.Requests(), 1)
}

func TestATooManyRequestsRefusalSentEveryTimeIsAnError(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: token})
	c, w := newClient(t, srv)
	for range 5 {
		srv.RefuseNext(fake.SecondaryRateLimit(429, 0))
	}
	_, err := c.Me(t.Context())
	_, ok := errors.AsType[*forge.RateLimitError](err)
	require.True(t, ok, "%v", err)
	assert.Contains(t, err.Error(), "secondary rate limit")
	assert.Len(t, w.all(), 4, "four waits, then the fifth refusal is the answer")
	assert.Len(t, srv.Requests(), 5)
}

func TestNewRefusesARepositoryThatIsNotOwnerName(t *testing.T) {
	for _, repo := range []string{"", "widgets", "acme/", "/widgets", "acme/widgets/extra"} {
		_, err := github.New(github.Options{Repo: repo})
		assert.ErrorContains(t, err, "is not owner/name", repo)
	}
}

package gitlab_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakeforge"
	fake "github.com/ralph-loop/ralph/internal/fakeforge/gitlab"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/gitlab"
	"github.com/ralph-loop/ralph/internal/hint"
)

const token = "glpat-fake-0123456789abcdef"

// project is a fake GitLab project and a client of it that selects the
// issues labelled "ralph".
func project(t *testing.T, o fake.Options) (*fake.Server, *gitlab.Client) {
	t.Helper()
	o.Project, o.Token = "acme/web-app", token
	srv := fake.Start(t, o)
	return srv, client(t, srv, gitlab.Options{})
}

func client(t *testing.T, srv *fake.Server, o gitlab.Options) *gitlab.Client {
	t.Helper()
	o.Project, o.APIURL, o.Token = "acme/web-app", srv.URL, token
	if o.Labels == nil {
		o.Labels = []string{"ralph"}
	}
	c, err := gitlab.New(o)
	require.NoError(t, err)
	return c
}

func ids(issues []forge.Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.ID)
	}
	return out
}

// paths are the paths of the requests sent, without their queries.
func paths(reqs []fakeforge.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+strings.SplitN(r.Path, "?", 2)[0])
	}
	return out
}

func TestOpenListsLabelledOpenIssuesOldestFirstWithTheirOpenBlockers(t *testing.T) {
	srv, c := project(t, fake.Options{Premium: true})
	first := srv.AddIssue(fake.NewIssue{Title: "First", Description: "Do it.", Labels: []string{"ralph", "P1"}})
	done := srv.AddIssue(fake.NewIssue{Title: "Done already", Labels: []string{"ralph"}})
	srv.AddIssue(fake.NewIssue{Title: "Not ours", Labels: []string{"bug"}})
	waits := srv.AddIssue(fake.NewIssue{Title: "Waits", Labels: []string{"ralph"}, Assignees: []string{"alice"}})
	design := srv.AddIssue(fake.NewIssue{Title: "Design, unlabelled", Labels: []string{"design"}})
	srv.Block(waits, first)
	srv.Block(waits, done)
	srv.Block(waits, design)
	srv.Relate(first, design)
	srv.SetIssueState(done, "closed")

	issues, err := c.Open(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "4"}, ids(issues), "open, labelled ralph, oldest first")
	assert.Equal(t, forge.Issue{ID: "1", Title: "First", Body: "Do it.", URL: srv.URL + "/acme/web-app/-/issues/1", Open: true,
		Labels: []string{"ralph", "P1"}, Priority: -1}, issues[0])
	assert.Equal(t, []string{"alice"}, issues[1].Assignees)
	assert.Equal(t, []string{"1", "5"}, issues[1].BlockedBy,
		"an open blocker counts whatever its labels; a closed one and a related issue do not")
}

func TestOpenAsksForLinksOnlyWhereGitLabHasBlockingLinks(t *testing.T) {
	cases := []struct {
		name    string
		premium bool
		issues  int
		pages   int
		links   int
		why     string
	}{
		{"free", false, 130, 2, 0, "GitLab Free has no blocking links, and its issues no weight: nothing more to ask"},
		{"premium", true, 7, 1, 7, "GitLab Premium: one request of each issue's links"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := project(t, fake.Options{Premium: tc.premium})
			for range tc.issues {
				srv.AddIssue(fake.NewIssue{Title: "Task", Labels: []string{"ralph"}})
			}
			issues, err := c.Open(t.Context())
			require.NoError(t, err)
			require.Len(t, issues, tc.issues, "every page")
			var lists, links int
			for _, p := range paths(srv.Requests()) {
				switch {
				case strings.HasSuffix(p, "/links"):
					links++
				case p == "GET /api/v4/projects/acme%2Fweb-app/issues":
					lists++
				}
			}
			assert.Equal(t, tc.pages, lists, "pages of 100")
			assert.Equal(t, tc.links, links, tc.why)
		})
	}
}

func TestIssueReadsOneIssueOpenOrNot(t *testing.T) {
	srv, c := project(t, fake.Options{Premium: true})
	a := srv.AddIssue(fake.NewIssue{Title: "A"})
	b := srv.AddIssue(fake.NewIssue{Title: "B"})
	srv.Block(b, a)
	srv.SetIssueState(b, "closed")
	is, err := c.Issue(t.Context(), "2")
	require.NoError(t, err)
	assert.Equal(t, "B", is.Title)
	assert.False(t, is.Open)
	assert.Equal(t, []string{"1"}, is.BlockedBy)

	for _, id := range []string{"99", "ENG-1", "0"} {
		_, err = c.Issue(t.Context(), id)
		require.ErrorIs(t, err, forge.ErrNotFound, id)
	}
}

func TestClaimCommentCloseReopenAndUnassign(t *testing.T) {
	srv, c := project(t, fake.Options{Premium: true})
	iid := srv.AddIssue(fake.NewIssue{Title: "Task", Labels: []string{"ralph"}, Assignees: []string{"alice"}})
	ctx := t.Context()
	me, err := c.Me(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ralph-bot", me)

	require.NoError(t, c.Assign(ctx, "1", me))
	require.NoError(t, c.Assign(ctx, "1", me), "assigning an assignee changes nothing")
	require.NoError(t, c.Comment(ctx, "1", "ralph is working on this."))
	assert.Equal(t, []string{"alice", "ralph-bot"}, srv.Issue(iid).Assignees, "alice keeps the issue too")

	require.NoError(t, c.Close(ctx, "1"))
	require.NoError(t, c.Close(ctx, "1"), "closing a closed issue changes nothing")
	assert.Equal(t, "closed", srv.Issue(iid).State)
	require.NoError(t, c.Reopen(ctx, "1"))
	require.NoError(t, c.Unassign(ctx, "1", me))
	require.NoError(t, c.Unassign(ctx, "1", me))
	st := srv.Issue(iid)
	assert.Equal(t, "opened", st.State)
	assert.Equal(t, []string{"alice"}, st.Assignees)
	assert.Equal(t, []string{"ralph is working on this."}, st.Notes)

	require.NoError(t, c.Unassign(ctx, "1", "alice"))
	assert.Empty(t, srv.Issue(iid).Assignees, "the last assignee goes too")
	assert.Len(t, srv.Writes(), 7, "one write for each change: assign, comment, close twice (GitLab makes nothing of the second), reopen, "+
		"unassign ralph-bot, unassign alice; none for an assignee assigned or unassigned already")
}

func TestAssignLooksUpAUserOnceAndSaysWhenThereIsNone(t *testing.T) {
	srv, c := project(t, fake.Options{})
	srv.AddUser("bot-two")
	srv.AddIssue(fake.NewIssue{Title: "A"})
	srv.AddIssue(fake.NewIssue{Title: "B"})
	require.NoError(t, c.Assign(t.Context(), "1", "bot-two"))
	require.NoError(t, c.Assign(t.Context(), "2", "bot-two"))
	assert.Equal(t, []string{"bot-two"}, srv.Issue(2).Assignees)
	lookups := 0
	for _, p := range paths(srv.Requests()) {
		if p == "GET /api/v4/users" {
			lookups++
		}
	}
	assert.Equal(t, 1, lookups, "a username's id is asked once")

	err := c.Assign(t.Context(), "1", "nobody-here")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no user "nobody-here"`)
	assert.Contains(t, hint.Of(err), "autopilot.source.assignee")
}

func TestAssignOnGitLabFreeSaysWhenSomeoneElseKeepsTheIssue(t *testing.T) {
	srv, c := project(t, fake.Options{})
	srv.AddIssue(fake.NewIssue{Title: "Taken", Assignees: []string{"alice"}})
	err := c.Assign(t.Context(), "1", "ralph-bot")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "still assigned to alice, not ralph-bot: GitLab Free has one assignee per issue")
}

func TestABadTokenOrProjectSaysHowToFixIt(t *testing.T) {
	srv, _ := project(t, fake.Options{})
	bad, err := gitlab.New(gitlab.Options{Project: "acme/web-app", APIURL: srv.URL, Token: "glpat-wrong"})
	require.NoError(t, err)
	_, err = bad.Me(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, hint.Of(err), "api scope")
	assert.NotContains(t, err.Error()+hint.Of(err), "glpat-wrong")

	missing, err := gitlab.New(gitlab.Options{Project: "acme/other", APIURL: srv.URL, Token: token})
	require.NoError(t, err)
	_, err = missing.Open(t.Context())
	require.ErrorIs(t, err, forge.ErrNotFound)
	assert.Contains(t, err.Error(), "there is no project acme/other")
	assert.Contains(t, hint.Of(err), "autopilot.source.project")
}

func TestARateLimitIsWaitedOutAndSaid(t *testing.T) {
	srv, _ := project(t, fake.Options{})
	srv.AddIssue(fake.NewIssue{Title: "A", Labels: []string{"ralph"}})
	var mu sync.Mutex
	var told []string
	c := client(t, srv, gitlab.Options{Wait: func(d time.Duration, why string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, d.String()+": "+why)
	}})
	srv.RefuseNext(fake.RateLimited(1))
	start := time.Now()
	issues, err := c.Open(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, ids(issues))
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "the wait GitLab asked for")
	require.Len(t, told, 1)
	assert.Equal(t, "1s: GET /api/v4/projects/acme/web-app/issues answered 429, retry after 1", told[0])
	assert.Len(t, paths(srv.Requests()), 2, "the refused request, and the same again")
}

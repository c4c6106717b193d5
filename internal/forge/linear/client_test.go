package linear

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	linearfake "github.com/ralph-loop/ralph/internal/fakeforge/linear"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

const testKey = "lin_api_T3stK3y0123456789abcdef"

// newFake is a workspace with the team ENG and its default states.
func newFake(t *testing.T) *linearfake.Fake {
	t.Helper()
	f := linearfake.New(t, testKey)
	f.AddTeam("ENG", "Engineering")
	return f
}

// newClient is the client of f's team ENG with o's other options.
func newClient(t *testing.T, f *linearfake.Fake, o Options) *Client {
	t.Helper()
	if o.Team == "" {
		o.Team = "ENG"
	}
	o.APIURL, o.Token = f.URL, testKey
	c, err := New(o)
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

func count(ops []string, name string) int {
	n := 0
	for _, op := range ops {
		if op == name {
			n++
		}
	}
	return n
}

func TestOpenListsTheTeamsLabelledTodoIssuesOldestFirstWithTheirOpenBlockers(t *testing.T) {
	f := newFake(t)
	jane := f.AddUser("Jane Doe", "jane", "jane@example.com")
	f.AddTeam("OPS", "Operations")
	base := f.AddIssue("ENG", linearfake.Issue{Title: "Base", Description: "Lay the base.", Priority: 3, Labels: []string{"ralph"}})
	after := f.AddIssue("ENG", linearfake.Issue{Title: "After", Priority: 1, Labels: []string{"ralph", "backend"}})
	doneBlocker := f.AddIssue("ENG", linearfake.Issue{Title: "Done already", State: "Done", Labels: []string{"ralph"}})
	f.Block(base, after)
	f.Block(doneBlocker, after)
	f.AddIssue("ENG", linearfake.Issue{Title: "Unlabelled", Priority: 2})
	f.AddIssue("ENG", linearfake.Issue{Title: "In the backlog", State: "Backlog", Labels: []string{"ralph"}})
	f.AddIssue("ENG", linearfake.Issue{Title: "Started", State: "In Progress", Labels: []string{"ralph"}})
	janes := f.AddIssue("ENG", linearfake.Issue{Title: "Jane's", Labels: []string{"Ralph"}, Assignee: jane})
	f.AddIssue("OPS", linearfake.Issue{Title: "Another team's", Labels: []string{"ralph"}})

	c := newClient(t, f, Options{Labels: []string{"ralph"}})
	c.pageSize = 2
	issues, err := c.Open(t.Context())
	require.NoError(t, err)

	require.Equal(t, []string{base, after, janes}, ids(issues), "oldest first, whatever order Linear gives")
	assert.Equal(t, forge.Issue{ID: base, Title: "Base", Body: "Lay the base.", URL: "https://linear.app/example/issue/ENG-1/base",
		Open: true, Labels: []string{"ralph"}, Priority: 2}, issues[0])
	assert.Equal(t, []string{base}, issues[1].BlockedBy, "a done blocker no longer blocks")
	assert.Equal(t, 0, issues[1].Priority, "urgent is the highest")
	assert.Equal(t, []string{"ralph", "backend"}, issues[1].Labels)
	assert.Equal(t, -1, issues[2].Priority, "no priority leaves it to labels or the default")
	assert.Equal(t, []string{jane}, issues[2].Assignees)
	assert.Equal(t, 2, count(f.Operations(), "Issues"), "three issues, two to a page")
	assert.Empty(t, f.Writes())
}

func TestOpenTakesTheStatesNamed(t *testing.T) {
	f := newFake(t)
	backlog := f.AddIssue("ENG", linearfake.Issue{Title: "In the backlog", State: "Backlog"})
	todo := f.AddIssue("ENG", linearfake.Issue{Title: "To do"})
	f.AddIssue("ENG", linearfake.Issue{Title: "Started", State: "In Progress"})

	issues, err := newClient(t, f, Options{States: []string{"backlog", "Todo"}}).Open(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{backlog, todo}, ids(issues))

	_, err = newClient(t, f, Options{States: []string{"Ready"}}).Open(t.Context())
	require.ErrorContains(t, err, `team ENG has no workflow state "Ready"`)
	assert.Equal(t, "states: lists the names of the team's states, which are: Backlog, Todo, In Progress, Done, Canceled", hint.Of(err))
}

func TestATeamTheKeyCannotSeeSaysWhatTeamIs(t *testing.T) {
	f := newFake(t)
	_, err := newClient(t, f, Options{Team: "WEB"}).Open(t.Context())
	require.ErrorContains(t, err, `no team with the key "WEB"`)
	assert.Contains(t, hint.Of(err), "the prefix of its issues' identifiers")

	issues, err := newClient(t, f, Options{Team: "eng"}).Open(t.Context())
	require.NoError(t, err, "a key in lower case names the team too")
	assert.Empty(t, issues)
}

func TestIssueIsLookedUpByItsIdentifierOpenOrNot(t *testing.T) {
	f := newFake(t)
	id := f.AddIssue("ENG", linearfake.Issue{Title: "Shipped", Labels: []string{"ralph"}})
	f.SetState(id, "Done")
	c := newClient(t, f, Options{})

	is, err := c.Issue(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, "Shipped", is.Title)
	assert.False(t, is.Open)

	_, err = c.Issue(t.Context(), "ENG-404")
	require.ErrorIs(t, err, forge.ErrNotFound)
	assert.ErrorContains(t, err, "issue ENG-404: linear: Issue: Could not find referenced Issue.")
}

func TestMeIsTheKeysUserOrTheAssigneeNamed(t *testing.T) {
	f := newFake(t)
	jane := f.AddUser("Jane Doe", "jane", "jane@example.com")
	f.AddUser("John Roe", "john", "john@example.com")
	f.AddUser("Jane Smith", "jane.s", "jane.smith@example.com")

	me, err := newClient(t, f, Options{}).Me(t.Context())
	require.NoError(t, err)
	assert.Equal(t, f.Viewer(), me)

	for _, who := range []string{"jane@example.com", "JANE@example.com", "jane", "Jane Doe"} {
		c := newClient(t, f, Options{Assignee: who})
		me, err := c.Me(t.Context())
		require.NoError(t, err, who)
		assert.Equal(t, jane, me, who)
		_, err = c.Me(t.Context())
		require.NoError(t, err)
	}
	assert.Equal(t, 4, count(f.Operations(), "Users"), "each client asks once")

	_, err = newClient(t, f, Options{Assignee: "nobody@example.com"}).Me(t.Context())
	require.ErrorContains(t, err, `no user of the workspace has the email, display name or name "nobody@example.com"`)
	assert.NotEmpty(t, hint.Of(err))
}

func TestClaimingCommentingClosingAndReopeningChangeTheIssue(t *testing.T) {
	f := newFake(t)
	jane := f.AddUser("Jane Doe", "jane", "jane@example.com")
	id := f.AddIssue("ENG", linearfake.Issue{Title: "Work", Labels: []string{"ralph"}})
	c := newClient(t, f, Options{})
	ctx := t.Context()
	me, err := c.Me(ctx)
	require.NoError(t, err)

	require.NoError(t, c.Assign(ctx, id, me))
	require.NoError(t, c.Comment(ctx, id, "ralph is working on this."))
	assert.Equal(t, me, f.Issue(id).Assignee)
	assert.Equal(t, []string{"ralph is working on this."}, f.Comments(id))

	require.NoError(t, c.Close(ctx, id))
	assert.Equal(t, "Done", f.Issue(id).State)
	writes := len(f.Writes())
	require.NoError(t, c.Close(ctx, id), "closing a closed issue succeeds")
	assert.Len(t, f.Writes(), writes, "and changes nothing")

	require.NoError(t, c.Reopen(ctx, id))
	assert.Equal(t, "Todo", f.Issue(id).State, "the team's first unstarted state")

	require.NoError(t, c.Assign(ctx, id, jane))
	writes = len(f.Writes())
	require.NoError(t, c.Unassign(ctx, id, me))
	assert.Equal(t, jane, f.Issue(id).Assignee, "someone else's issue stays theirs")
	assert.Len(t, f.Writes(), writes)
	require.NoError(t, c.Assign(ctx, id, me))
	require.NoError(t, c.Unassign(ctx, id, me))
	assert.Empty(t, f.Issue(id).Assignee)

	// A fresh client, which has seen no issue, finds the id to change.
	require.NoError(t, newClient(t, f, Options{}).Comment(ctx, id, "again"))
	assert.Equal(t, []string{"ralph is working on this.", "again"}, f.Comments(id))
	for _, w := range f.Writes() {
		assert.NotContains(t, w.Body, testKey)
	}
}

func TestARefusedKeySaysWhereTheKeyComesFrom(t *testing.T) {
	f := newFake(t)
	c, err := New(Options{Team: "ENG", APIURL: f.URL, Token: "lin_api_wrong"})
	require.NoError(t, err)
	_, err = c.Me(t.Context())
	require.ErrorContains(t, err, "linear: Viewer: You need to authenticate to access this operation.")
	assert.Contains(t, hint.Of(err), "token_env")
	assert.NotContains(t, err.Error(), "lin_api_wrong")
}

func TestLinearsRateLimitIsWaitedOutAndTold(t *testing.T) {
	f := newFake(t)
	f.RateLimitNext(1, time.Now())
	var told []string
	c := newClient(t, f, Options{Wait: func(d time.Duration, why string) { told = append(told, d.Round(time.Second).String()+" "+why) }})
	me, err := c.Me(t.Context())
	require.NoError(t, err)
	assert.Equal(t, f.Viewer(), me)
	require.Len(t, told, 1)
	assert.Regexp(t, `^1s POST /graphql answered 400 RATELIMITED, limit resets at `, told[0])
	assert.Equal(t, []string{"Viewer", "Viewer"}, f.Operations(), "the refused request is sent again")
}

func TestARateLimitTooLongToWaitForIsAnErrorThatSaysWhenItResets(t *testing.T) {
	f := newFake(t)
	reset := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	f.RateLimitNext(1, reset)
	_, err := newClient(t, f, Options{}).Me(t.Context())
	limit, ok := errors.AsType[*forge.RateLimitError](err)
	require.True(t, ok, "%v", err)
	assert.True(t, limit.Reset.Equal(reset), "%v", limit.Reset)
	assert.Contains(t, limit.Why, "Rate limit exceeded")
}

func TestAnAPIURLWithoutAPathIsTheGraphQLEndpoint(t *testing.T) {
	f := newFake(t)
	c, err := New(Options{Team: "ENG", APIURL: strings.TrimSuffix(f.URL, "/graphql"), Token: testKey})
	require.NoError(t, err)
	_, err = c.Me(context.Background())
	require.NoError(t, err)
	_, err = New(Options{Team: "ENG", APIURL: "api.linear.app"})
	require.ErrorContains(t, err, "is not an http or https URL")
	_, err = New(Options{})
	require.ErrorContains(t, err, "no team")
}

func TestEveryOperationSelectsOnlyWhatLinearHas(t *testing.T) {
	// The fake refuses a field its fixtures (Linear's types) lack: every
	// operation the tracker sends is answered.
	f := newFake(t)
	id := f.AddIssue("ENG", linearfake.Issue{Title: "x", Labels: []string{"ralph"}})
	c := newClient(t, f, Options{Assignee: "ralph@example.com", Labels: []string{"ralph"}})
	ctx := t.Context()
	_, err := c.Open(ctx)
	require.NoError(t, err)
	me, err := c.Me(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Assign(ctx, id, me))
	require.NoError(t, c.Comment(ctx, id, "hi"))
	require.NoError(t, c.Close(ctx, id))
	ops := f.Operations()
	slices.Sort(ops)
	assert.Equal(t, []string{"CommentCreate", "Issue", "IssueUpdate", "Issues", "Team", "Users"}, slices.Compact(ops))
}

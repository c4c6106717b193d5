package linear

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

// Linear's answers as its schema and documentation shape them, the
// fake's fixtures (internal/fakeforge/linear/testdata, whose README names
// their sources), read by the client's own types.

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "fakeforge", "linear", "testdata", name))
	require.NoError(t, err)
	return data
}

// decodeData decodes a recorded answer's data as do does.
func decodeData(t *testing.T, name string, out any) {
	t.Helper()
	var r response
	require.NoError(t, json.Unmarshal(recorded(t, name), &r))
	require.Empty(t, r.Errors)
	require.NoError(t, json.Unmarshal(r.Data, out))
}

func TestRecordedIssuesAreRead(t *testing.T) {
	var page issuesData
	decodeData(t, "issues.json", &page)
	c := &Client{uuids: map[string]string{}}
	require.Len(t, page.Issues.Nodes, 2)
	assert.True(t, page.Issues.PageInfo.HasNextPage)
	assert.Equal(t, "8a4e2b6c-1f9d-4c3a-b7e5-0d2f8c6a4e19", *page.Issues.PageInfo.EndCursor)

	first := c.issue(page.Issues.Nodes[0])
	assert.Equal(t, forge.Issue{ID: "ENG-13", Title: "Export rows as CSV",
		Body: "Stream the rows of a table as CSV.\n\n## Acceptance criteria\n\n- `GET /v1/export?table=t` answers `text/csv`\n- `go test ./...`",
		URL:  "https://linear.app/example/issue/ENG-13/export-rows-as-csv", Open: true, Labels: []string{"ralph"},
		Assignees: []string{"0b3f2c1e-8d4a-4c6e-9f1a-2b7d5e8c9a01"}, Priority: -1}, first)

	second := c.issue(page.Issues.Nodes[1])
	assert.Equal(t, []string{"ENG-11"}, second.BlockedBy, "blocked by the issue in progress; not by the done one, nor by a related one")
	assert.Equal(t, 1, second.Priority, "Linear's high")
	assert.Equal(t, []string{"ralph", "P1"}, second.Labels)
	assert.Empty(t, second.Assignees)
	assert.Equal(t, "2f9c1d7e-6a3b-4e8f-9d2c-5b1a7e4f3c90", c.uuids["ENG-13"], "the ids mutations need are remembered")
}

func TestARecordedDoneIssueIsNotOpen(t *testing.T) {
	var out issueData
	decodeData(t, "issue.json", &out)
	is := (&Client{uuids: map[string]string{}}).issue(out.Issue)
	assert.Equal(t, "ENG-11", is.ID)
	assert.False(t, is.Open)
	assert.Empty(t, is.Body, "a null description is an empty body")
	assert.Equal(t, 0, is.Priority, "Linear's urgent")
	assert.Equal(t, []string{"component:api"}, is.Labels)
}

func TestRecordedTeamStatesGiveTheDefaultStatesAndTheirMoves(t *testing.T) {
	var out teamData
	decodeData(t, "teams.json", &out)
	require.Len(t, out.Teams.Nodes, 1)
	tm := &out.Teams.Nodes[0]
	assert.Equal(t, "ENG", tm.Key)
	states, err := (&Client{}).openStates(tm)
	require.NoError(t, err)
	assert.Equal(t, []string{"c3e2b8d5-2f6a-4b9c-8d4e-8f7a6b5c4d32"}, states, "Todo, the team's one unstarted state")
	states, err = (&Client{opts: Options{States: []string{"Backlog", "todo"}}}).openStates(tm)
	require.NoError(t, err)
	assert.Len(t, states, 2)
}

func TestRecordedViewerUsersAndPayloadsAreRead(t *testing.T) {
	var v viewerData
	decodeData(t, "viewer.json", &v)
	assert.Equal(t, "0b3f2c1e-8d4a-4c6e-9f1a-2b7d5e8c9a01", v.Viewer.ID)
	var u usersData
	decodeData(t, "users.json", &u)
	require.Len(t, u.Users.Nodes, 1)
	assert.Equal(t, "jane@example.com", u.Users.Nodes[0].Email)
	var up issueUpdateData
	decodeData(t, "issue_update.json", &up)
	assert.True(t, up.IssueUpdate.Success)
	var cc commentCreateData
	decodeData(t, "comment_create.json", &cc)
	assert.True(t, cc.CommentCreate.Success)
}

// answering serves body with status and headers to every request.
func answering(t *testing.T, status int, headers map[string]string, body []byte) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{Team: "ENG", APIURL: srv.URL + "/graphql", Token: testKey})
	require.NoError(t, err)
	return c
}

func TestRecordedErrorsAreReadForWhatTheySay(t *testing.T) {
	_, err := answering(t, http.StatusBadRequest, nil, recorded(t, "error_not_found.json")).Issue(t.Context(), "ENG-404")
	require.ErrorIs(t, err, forge.ErrNotFound)

	_, err = answering(t, http.StatusUnauthorized, nil, recorded(t, "error_authentication.json")).Me(t.Context())
	require.ErrorContains(t, err, "You need to authenticate")
	assert.NotEmpty(t, hint.Of(err))

	reset := time.Now().Add(2 * time.Hour).Truncate(time.Millisecond)
	_, err = answering(t, http.StatusBadRequest, map[string]string{
		"X-RateLimit-Requests-Remaining": "0", "X-RateLimit-Requests-Reset": strconv.FormatInt(reset.UnixMilli(), 10)},
		recorded(t, "error_ratelimited.json")).Me(t.Context())
	limit, ok := errors.AsType[*forge.RateLimitError](err)
	require.True(t, ok, "%v", err)
	assert.True(t, limit.Reset.Equal(reset))

	_, err = answering(t, http.StatusBadGateway, nil, []byte("<html>bad gateway</html>")).Me(t.Context())
	require.ErrorContains(t, err, "answered 502 Bad Gateway: <html>bad gateway</html>")
}

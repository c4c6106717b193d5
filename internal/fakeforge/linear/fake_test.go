package linear

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const key = "lin_api_fake"

// send posts one GraphQL request as a client would and returns the
// status and the decoded answer.
func send(t *testing.T, f *Fake, auth, query string, vars map[string]any) (int, map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func firstError(t *testing.T, answer map[string]any) string {
	t.Helper()
	errs, ok := answer["errors"].([]any)
	require.True(t, ok, "%v", answer)
	require.NotEmpty(t, errs)
	return errs[0].(map[string]any)["message"].(string)
}

func workspace(t *testing.T) *Fake {
	t.Helper()
	f := New(t, key)
	f.AddTeam("ENG", "Engineering")
	return f
}

func TestAnAnswerHoldsWhatTheQuerySelectsUnderItsAliases(t *testing.T) {
	f := workspace(t)
	id := f.AddIssue("ENG", Issue{Title: "Export rows", Priority: 2, Labels: []string{"ralph", "P1"}})
	status, out := send(t, f, key, `query Issue($id: String!) {
  issue(id: $id) { identifier name: title priority state { name type } labels(first: 1) { nodes { name } pageInfo { hasNextPage } } }
}`, map[string]any{"id": id})
	require.Equal(t, http.StatusOK, status, "%v", out)
	assert.Equal(t, map[string]any{"data": map[string]any{"issue": map[string]any{
		"identifier": "ENG-1", "name": "Export rows", "priority": 2.0,
		"state":  map[string]any{"name": "Todo", "type": "unstarted"},
		"labels": map[string]any{"nodes": []any{map[string]any{"name": "ralph"}}, "pageInfo": map[string]any{"hasNextPage": true}},
	}}}, out)
}

func TestAFieldLinearsTypeLacksIsRefused(t *testing.T) {
	f := workspace(t)
	id := f.AddIssue("ENG", Issue{Title: "x"})
	status, out := send(t, f, key, `query Issue($id: String!) { issue(id: $id) { id state { id kind } } }`, map[string]any{"id": id})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `cannot query field "kind" on type "WorkflowState"`, firstError(t, out))
}

func TestAFilterTheFakeCannotApplyIsRefused(t *testing.T) {
	f := workspace(t)
	f.AddIssue("ENG", Issue{Title: "x"})
	status, out := send(t, f, key, `query Issues($filter: IssueFilter) { issues(filter: $filter) { nodes { id } } }`,
		map[string]any{"filter": map[string]any{"title": map[string]any{"containsIgnoreCase": "x"}}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `filter title: the fake does not compare with "containsIgnoreCase"`, firstError(t, out))
}

func TestIssuesComeNewestFirstAPageAtATime(t *testing.T) {
	f := workspace(t)
	for _, title := range []string{"a", "b", "c"} {
		f.AddIssue("ENG", Issue{Title: title, Labels: []string{"ralph"}})
	}
	f.AddIssue("ENG", Issue{Title: "unlabelled"})
	query := `query Issues($filter: IssueFilter, $first: Int, $after: String) {
  issues(filter: $filter, first: $first, after: $after, orderBy: createdAt) { nodes { identifier } pageInfo { hasNextPage endCursor } }
}`
	filter := map[string]any{"labels": map[string]any{"some": map[string]any{"name": map[string]any{"eqIgnoreCase": "RALPH"}}}}
	var seen []any
	vars := map[string]any{"filter": filter, "first": 2}
	for range 3 {
		status, out := send(t, f, key, query, vars)
		require.Equal(t, http.StatusOK, status, "%v", out)
		conn := out["data"].(map[string]any)["issues"].(map[string]any)
		for _, n := range conn["nodes"].([]any) {
			seen = append(seen, n.(map[string]any)["identifier"])
		}
		info := conn["pageInfo"].(map[string]any)
		if info["hasNextPage"] != true {
			break
		}
		vars["after"] = info["endCursor"]
	}
	assert.Equal(t, []any{"ENG-3", "ENG-2", "ENG-1"}, seen)
}

func TestAWrongKeyIsRefusedAsLinearRefusesIt(t *testing.T) {
	f := workspace(t)
	status, out := send(t, f, "Bearer "+key, `query Viewer { viewer { id } }`, nil)
	assert.Equal(t, http.StatusUnauthorized, status, "a personal key is sent bare")
	assert.Equal(t, "Authentication required, not authenticated", firstError(t, out))
}

func TestOnlyTheOperationsTheClientSendsAreServed(t *testing.T) {
	f := workspace(t)
	status, out := send(t, f, key, `query Projects { projects { nodes { id } } }`, nil)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `the fake does not serve the query "Projects" as sent`, firstError(t, out))
}

func TestMutationsChangeTheWorkspaceAndAreTheOnlyWrites(t *testing.T) {
	f := workspace(t)
	id := f.AddIssue("ENG", Issue{Title: "x"})
	_, out := send(t, f, key, `query Team($filter: TeamFilter) { teams(filter: $filter) { nodes { states { nodes { id name } } } } }`,
		map[string]any{"filter": map[string]any{"key": map[string]any{"eq": "ENG"}}})
	states := out["data"].(map[string]any)["teams"].(map[string]any)["nodes"].([]any)[0].(map[string]any)["states"].(map[string]any)["nodes"].([]any)
	var done string
	for _, s := range states {
		if s.(map[string]any)["name"] == "Done" {
			done = s.(map[string]any)["id"].(string)
		}
	}
	status, out := send(t, f, key, `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success issue { state { name } assignee { id } } }
}`, map[string]any{"id": id, "input": map[string]any{"stateId": done, "assigneeId": f.Viewer()}})
	require.Equal(t, http.StatusOK, status, "%v", out)
	assert.Equal(t, "Done", f.Issue(id).State)
	assert.Equal(t, f.Viewer(), f.Issue(id).Assignee)

	status, out = send(t, f, key, `mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { body user { id } } } }`,
		map[string]any{"input": map[string]any{"issueId": id, "body": "hello"}})
	require.Equal(t, http.StatusOK, status, "%v", out)
	assert.Equal(t, []string{"hello"}, f.Comments(id))

	status, out = send(t, f, key, `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success } }`,
		map[string]any{"id": "ENG-99", "input": map[string]any{"assigneeId": nil}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "Entity not found: Issue", firstError(t, out))

	assert.Len(t, f.Requests(), 4)
	assert.Len(t, f.Writes(), 3)
	assert.Equal(t, []string{"Team", "IssueUpdate", "CommentCreate", "IssueUpdate"}, f.Operations())
}

package gitlab_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/gitlab"
)

// What the fake answers as GitLab does, beyond what the client's tests
// (internal/forge/gitlab) see of it.

func call(t *testing.T, srv *fake.Server, method, path, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+"/api/v4/"+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

func TestTheFakeChecksTheTokenAndKnowsTheProjectByPathOrID(t *testing.T) {
	srv := fake.Start(t, fake.Options{Project: "acme/web-app", ProjectID: 42, Token: "glpat-x"})
	srv.AddIssue(fake.NewIssue{Title: "A"})
	resp, body := call(t, srv, "GET", "user", "glpat-wrong", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.JSONEq(t, `{"message":"401 Unauthorized"}`, body)

	for _, id := range []string{url.PathEscape("acme/web-app"), "42"} {
		resp, body = call(t, srv, "GET", "projects/"+id+"/issues/1", "glpat-x", "")
		assert.Equal(t, http.StatusOK, resp.StatusCode, id)
		assert.Contains(t, body, `"title":"A"`, id)
	}
	resp, body = call(t, srv, "GET", "projects/acme%2Fother/issues", "glpat-x", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.JSONEq(t, `{"message":"404 Project Not Found"}`, body)
}

func TestTheFakeAnswersWithTheRecordedShapeAndPaginates(t *testing.T) {
	srv := fake.Start(t, fake.Options{})
	for range 3 {
		srv.AddIssue(fake.NewIssue{Title: "Task", Labels: []string{"ralph"}})
	}
	resp, body := call(t, srv, "GET", "projects/group%2Fproject/issues?state=opened&per_page=2&page=1&sort=asc", "", "")
	assert.Equal(t, "2", resp.Header.Get("X-Next-Page"))
	assert.Equal(t, "3", resp.Header.Get("X-Total"))
	assert.Equal(t, "2", resp.Header.Get("X-Total-Pages"))
	assert.Contains(t, resp.Header.Get("Link"), `rel="next"`)
	var page []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page, 2)
	assert.EqualValues(t, 1, page[0]["iid"], "oldest first with sort=asc")
	for _, field := range []string{"time_stats", "severity", "issue_type", "task_completion_status", "_links", "references"} {
		assert.Contains(t, page[0], field, "a field of GitLab's recorded answer")
	}
	assert.NotContains(t, page[0], "weight", "GitLab Free's issues have no weight")
	resp, _ = call(t, srv, "GET", "projects/group%2Fproject/issues?state=opened&per_page=2&page=2", "", "")
	assert.Empty(t, resp.Header.Get("X-Next-Page"), "the last page")
}

func TestTheFakeKeepsOneAssigneeOnGitLabFreeAndReadsForms(t *testing.T) {
	srv := fake.Start(t, fake.Options{})
	alice, bob := srv.AddUser("alice"), srv.AddUser("bob")
	srv.AddIssue(fake.NewIssue{Title: "A"})
	form := url.Values{"assignee_ids[]": {strconv.FormatInt(alice, 10), strconv.FormatInt(bob, 10)}}
	resp, _ := call(t, srv, "PUT", "projects/group%2Fproject/issues/1", "", form.Encode())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"alice"}, srv.Issue(1).Assignees, "GitLab Free keeps the first")

	resp, body := call(t, srv, "PUT", "projects/group%2Fproject/issues/1", "", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "at least one parameter must be provided")
}

package github_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/github"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// call sends method path (under the API's root) with body and decodes
// the JSON answer into out; it returns the response.
func call(t *testing.T, srv *fake.Server, method, path, body string, out any) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer t0k3n")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
	return resp
}

func keys(t *testing.T, example string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", example+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	return slices.Sorted(maps.Keys(o))
}

func sortedKeys(o map[string]any) []string { return slices.Sorted(maps.Keys(o)) }

// remoteWithBranch is a bare repository with main and a branch off it
// that adds a file.
func remoteWithBranch(t *testing.T, branch string) string {
	t.Helper()
	url, _ := gittest.SharedRemote(t)
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, t.TempDir(), "clone", "-q", url, clone)
	gittest.Run(t, clone, "checkout", "-q", "-b", branch)
	gittest.CommitFile(t, clone, "feature.txt", "feature\n", "add a feature")
	gittest.Run(t, clone, "push", "-q", "origin", branch)
	return url
}

func TestAnswersHaveEveryFieldOfGitHubsExamples(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Token: "t0k3n", Git: remoteWithBranch(t, "feature")})
	id := srv.AddIssue(fake.Issue{Title: "a task", Labels: []string{"ralph"}})

	var issue map[string]any
	call(t, srv, "GET", "/repos/acme/widgets/issues/"+id, "", &issue)
	want := append(slices.DeleteFunc(keys(t, "issue"), func(k string) bool { return k == "pull_request" }),
		"issue_dependencies_summary", "sub_issues_summary")
	assert.ElementsMatch(t, want, sortedKeys(issue), "an issue has no pull_request key, and has the summaries")
	assert.Equal(t, srv.URL()+"/repos/acme/widgets/issues/1", issue["url"])
	assert.Equal(t, srv.WebURL()+"/acme/widgets/issues/1", issue["html_url"])
	assert.Equal(t, "ralph-bot", issue["user"].(map[string]any)["login"])
	assert.Equal(t, srv.URL()+"/users/ralph-bot", issue["user"].(map[string]any)["url"], "the example's octocat renamed")

	var comment map[string]any
	resp := call(t, srv, "POST", "/repos/acme/widgets/issues/"+id+"/comments", `{"body":"hello"}`, &comment)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, keys(t, "issue-comment"), sortedKeys(comment))

	var pr map[string]any
	resp = call(t, srv, "POST", "/repos/acme/widgets/pulls", `{"title":"a feature","head":"feature","base":"main"}`, &pr)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%v", pr)
	assert.Equal(t, keys(t, "pull-request"), sortedKeys(pr))
	assert.Equal(t, true, pr["mergeable"])
	assert.Equal(t, "clean", pr["mergeable_state"])
	assert.EqualValues(t, 1, pr["commits"])
	assert.EqualValues(t, 1, pr["changed_files"])
	var list []map[string]any
	call(t, srv, "GET", "/repos/acme/widgets/pulls?head=acme:feature", "", &list)
	require.Len(t, list, 1)
	assert.NotContains(t, list[0], "mergeable", "a list has the pull-request-simple fields")
	assert.Len(t, list[0], len(pr)-12)

	var me map[string]any
	call(t, srv, "GET", "/user", "", &me)
	assert.Equal(t, keys(t, "private-user"), sortedKeys(me))
	assert.Equal(t, "ralph-bot", me["login"])
}

func TestListsComeInPagesWithGitHubsLinkHeader(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets"})
	for range 5 {
		srv.AddIssue(fake.Issue{Title: "a task"})
	}
	var first []map[string]any
	resp := call(t, srv, "GET", "/repos/acme/widgets/issues?per_page=2&direction=asc", "", &first)
	require.Len(t, first, 2)
	assert.EqualValues(t, 1, first[0]["number"])
	link := resp.Header.Get("Link")
	assert.Contains(t, link, `page=2`)
	assert.Contains(t, link, `rel="next"`)
	assert.Contains(t, link, `rel="last"`)

	var last []map[string]any
	resp = call(t, srv, "GET", "/repos/acme/widgets/issues?per_page=2&direction=asc&page=3", "", &last)
	require.Len(t, last, 1)
	assert.EqualValues(t, 5, last[0]["number"])
	assert.NotContains(t, resp.Header.Get("Link"), `rel="next"`)
	assert.Contains(t, resp.Header.Get("Link"), `rel="prev"`)

	var newest []map[string]any
	call(t, srv, "GET", "/repos/acme/widgets/issues", "", &newest)
	assert.EqualValues(t, 5, newest[0]["number"], "newest first unless asked")
	assert.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"))
}

func TestPullRequestsAreRefusedAsGitHubRefusesThem(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", Git: remoteWithBranch(t, "feature")})
	cases := []struct{ name, body, says string }{
		{"no title", `{"head":"feature","base":"main"}`, `"missing_field"`},
		{"no such head", `{"title":"t","head":"nope","base":"main"}`, `"field":"head"`},
		{"no such base", `{"title":"t","head":"feature","base":"nope"}`, `"field":"base"`},
		{"no commits between", `{"title":"t","head":"main","base":"main"}`, "No commits between main and main"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var answer map[string]any
			resp := call(t, srv, "POST", "/repos/acme/widgets/pulls", tc.body, &answer)
			assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
			data, _ := json.Marshal(answer)
			assert.Contains(t, string(data), tc.says)
		})
	}
	resp := call(t, srv, "POST", "/repos/acme/widgets/pulls", `{"title":"t","head":"acme:feature","base":"main"}`, nil)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var answer map[string]any
	resp = call(t, srv, "POST", "/repos/acme/widgets/pulls", `{"title":"again","head":"feature","base":"main"}`, &answer)
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
	data, _ := json.Marshal(answer)
	assert.Contains(t, string(data), "A pull request already exists for acme:feature.")
	assert.Len(t, srv.PRs(), 1)
}

func TestAnIssueIsAssignedOnlyToWhomGitHubWouldAssignIt(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets", User: "ralph-bot", Collaborators: []string{"alice"}})
	id := srv.AddIssue(fake.Issue{Title: "a task"})
	var issue map[string]any
	resp := call(t, srv, "POST", "/repos/acme/widgets/issues/"+id+"/assignees", `{"assignees":["alice","mallory","ralph-bot"]}`, &issue)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	got, _ := srv.Issue(id)
	assert.Equal(t, []string{"alice", "ralph-bot"}, got.Assignees, "mallory left out without a word")
	assert.Equal(t, "alice", issue["assignee"].(map[string]any)["login"])
}

func TestAWriteIsRecordedAndAReadIsNot(t *testing.T) {
	srv := fake.New(t, fake.Options{Repo: "acme/widgets"})
	id := srv.AddIssue(fake.Issue{Title: "a task"})
	call(t, srv, "GET", "/repos/acme/widgets/issues/"+id, "", nil)
	assert.Empty(t, srv.Writes())
	call(t, srv, "PATCH", "/repos/acme/widgets/issues/"+id, `{"state":"closed"}`, nil)
	require.Len(t, srv.Writes(), 1)
	assert.Equal(t, "PATCH", srv.Writes()[0].Method)
	got, _ := srv.Issue(id)
	assert.Equal(t, "closed", got.State)
	resp := call(t, srv, "GET", "/repos/acme/nothing/issues", "", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

package github_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/github"
)

// GitHub's documented examples, recorded beside the fake that answers
// with them (see its testdata/README.md): the client is shown them as
// GitHub sends them, not as the fake rewrites them.

func example(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "fakeforge", "github", "testdata", name+".json"))
	require.NoError(t, err)
	var o map[string]any
	require.NoError(t, json.Unmarshal(data, &o))
	return o
}

// canned serves answers by path under /api/v3/, 404 for any other, and
// counts what it was asked.
type canned struct {
	mu      sync.Mutex
	answers map[string]any
	asked   map[string]int
}

func serve(t *testing.T, answers map[string]any) (*github.Client, *canned) {
	t.Helper()
	c := &canned{answers: answers, asked: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.asked[r.URL.Path]++
		answer, ok := c.answers[r.URL.Path]
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}`))
			return
		}
		assert.NoError(t, json.NewEncoder(w).Encode(answer))
	}))
	t.Cleanup(srv.Close)
	client, err := github.New(github.Options{Repo: "octocat/Hello-World", APIURL: srv.URL + "/api/v3", Token: token})
	require.NoError(t, err)
	return client, c
}

func (c *canned) times(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[path]
}

func TestAnIssueIsReadFromGitHubsExample(t *testing.T) {
	const path = "/api/v3/repos/octocat/Hello-World/issues/1347"
	issue := example(t, "issue")
	client, _ := serve(t, map[string]any{path: issue})
	_, err := client.Issue(t.Context(), "1347")
	assert.ErrorIs(t, err, forge.ErrNotFound, "the example is a pull request's (it has pull_request)")

	delete(issue, "pull_request")
	client, asked := serve(t, map[string]any{path: issue})
	is, err := client.Issue(t.Context(), "1347")
	require.NoError(t, err)
	assert.Equal(t, forge.Issue{ID: "1347", Title: "Found a bug", Body: "I'm having a problem with this.",
		URL: "https://github.com/octocat/Hello-World/issues/1347", Open: true, Labels: []string{"bug"},
		Assignees: []string{"octocat"}, Priority: -1}, is)

	// The example has no summaries (as a GitHub Enterprise Server without
	// dependencies or sub-issues answers): both relations are asked, and
	// their 404 is taken as the server lacking them, not asked again.
	assert.Equal(t, 1, asked.times(path+"/dependencies/blocked_by"))
	assert.Equal(t, 1, asked.times(path+"/sub_issues"))
	_, err = client.Issue(t.Context(), "1347")
	require.NoError(t, err)
	assert.Equal(t, 1, asked.times(path+"/dependencies/blocked_by"))
	assert.Equal(t, 1, asked.times(path+"/sub_issues"))
}

func TestAnIssuesSummariesSayWhatToAsk(t *testing.T) {
	const path = "/api/v3/repos/octocat/Hello-World/issues/1347"
	issue := example(t, "issue")
	delete(issue, "pull_request")
	issue["issue_dependencies_summary"] = map[string]any{"blocked_by": 1, "blocking": 0, "total_blocked_by": 2, "total_blocking": 0}
	issue["sub_issues_summary"] = map[string]any{"total": 2, "completed": 2, "percent_completed": 100}
	blocker := example(t, "issue")
	delete(blocker, "pull_request")
	blocker["number"], blocker["repository_url"] = 7, "https://api.github.com/repos/octocat/Spoon-Knife"
	closed := example(t, "issue")
	closed["number"], closed["state"] = 8, "closed"
	client, asked := serve(t, map[string]any{path: issue, path + "/dependencies/blocked_by": []any{blocker, closed}})

	is, err := client.Issue(t.Context(), "1347")
	require.NoError(t, err)
	assert.Equal(t, []string{"octocat/Spoon-Knife#7"}, is.BlockedBy, "the open blocker, in another repository")
	assert.Equal(t, 0, asked.times(path+"/sub_issues"), "every sub-issue is completed")
}

func TestAPullRequestIsReadFromGitHubsExample(t *testing.T) {
	const path = "/api/v3/repos/octocat/Hello-World/pulls/1347"
	base := forge.PullRequest{Number: 1347, URL: "https://github.com/octocat/Hello-World/pull/1347",
		Head: "new-topic", Base: "master", HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e"}
	cases := []struct {
		name   string
		change map[string]any
		want   func(pr forge.PullRequest) forge.PullRequest
	}{
		{"as documented: merged_at is set", nil, func(pr forge.PullRequest) forge.PullRequest {
			pr.State, pr.MergeCommit = forge.StateMerged, "e5bd3914e2e596debea16f433f57875b5b90bcd6"
			return pr
		}},
		{"open and mergeable", map[string]any{"merged_at": nil, "closed_at": nil}, func(pr forge.PullRequest) forge.PullRequest {
			pr.State = forge.StateOpen
			return pr
		}},
		{"open, mergeability not computed yet", map[string]any{"merged_at": nil, "mergeable": nil, "mergeable_state": "unknown"},
			func(pr forge.PullRequest) forge.PullRequest {
				pr.State = forge.StateOpen
				return pr
			}},
		{"open and conflicting", map[string]any{"merged_at": nil, "mergeable": false, "mergeable_state": "dirty"},
			func(pr forge.PullRequest) forge.PullRequest {
				pr.State, pr.Conflicts = forge.StateOpen, true
				return pr
			}},
		{"closed unmerged", map[string]any{"merged_at": nil, "state": "closed"}, func(pr forge.PullRequest) forge.PullRequest {
			pr.State = forge.StateClosed
			return pr
		}},
		{"merged, as GET says it", map[string]any{"state": "closed", "merged": true}, func(pr forge.PullRequest) forge.PullRequest {
			pr.State, pr.MergeCommit = forge.StateMerged, "e5bd3914e2e596debea16f433f57875b5b90bcd6"
			return pr
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr := example(t, "pull-request")
			for k, v := range tc.change {
				pr[k] = v
			}
			client, _ := serve(t, map[string]any{path: pr})
			got, err := client.Pulls().Get(t.Context(), 1347)
			require.NoError(t, err)
			assert.Equal(t, tc.want(base), got)
		})
	}
}

func TestTheTokensUserIsReadFromGitHubsExample(t *testing.T) {
	client, _ := serve(t, map[string]any{"/api/v3/user": example(t, "private-user")})
	me, err := client.Me(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "octocat", me)
}

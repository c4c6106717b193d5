package gitlab_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/gitlab"
)

// The client's reading of GitLab's answers, recorded: the examples of
// GitLab's API documentation and answers recorded from gitlab.com (their
// sources are in internal/fakeforge/gitlab/testdata/README.md), served as
// they are.

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "fakeforge", "gitlab", "testdata", name))
	require.NoError(t, err)
	return data
}

// replay serves each path's recorded answer, the body as given.
func replay(t *testing.T, answers map[string][]byte) *gitlab.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := answers[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			t.Errorf("no recorded answer for %s %s", r.Method, r.URL.EscapedPath())
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c, err := gitlab.New(gitlab.Options{Project: "my-group/my-project", APIURL: srv.URL, Token: "t"})
	require.NoError(t, err)
	return c
}

func TestRecordedIssuesAreRead(t *testing.T) {
	c := replay(t, map[string][]byte{"GET /api/v4/projects/my-group%2Fmy-project/issues": recorded(t, "issues.json")})
	issues, err := c.Open(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []forge.Issue{{ID: "1", Title: "Ut commodi ullam eos dolores perferendis nihil sunt.",
		Body: "Omnis vero earum sunt corporis dolor et placeat.", URL: "http://gitlab.example.com/my-group/my-project/issues/1",
		Open: false, Labels: []string{"foo", "bar"}, Assignees: []string{"lennie"}, Priority: -1}}, issues,
		"GitLab Free's issue (no weight): no links asked for")
}

func TestRecordedPremiumIssueIsReadWithItsOpenBlockers(t *testing.T) {
	var issue map[string]any
	require.NoError(t, json.Unmarshal(recorded(t, "issue.json"), &issue))
	issue["weight"] = nil // as GitLab Premium answers
	premium, err := json.Marshal(issue)
	require.NoError(t, err)
	var links []map[string]any
	require.NoError(t, json.Unmarshal(recorded(t, "issue_links.json"), &links))
	blocked := func(iid, projectID float64, state, full string) map[string]any {
		l := map[string]any{}
		for k, v := range links[0] {
			l[k] = v
		}
		l["iid"], l["project_id"], l["state"], l["link_type"] = iid, projectID, state, "is_blocked_by"
		if full != "" {
			l["references"] = map[string]any{"short": "#1", "relative": full, "full": full}
		}
		return l
	}
	relations, err := json.Marshal([]map[string]any{
		links[0], // relates_to: not a blocker
		blocked(14, 4, "opened", ""),
		blocked(15, 4, "closed", ""),
		blocked(3, 9, "opened", "other-group/api#3"),
	})
	require.NoError(t, err)
	c := replay(t, map[string][]byte{
		"GET /api/v4/projects/my-group%2Fmy-project/issues/1":       premium,
		"GET /api/v4/projects/my-group%2Fmy-project/issues/1/links": relations,
	})
	is, err := c.Issue(t.Context(), "1")
	require.NoError(t, err)
	assert.False(t, is.Open, "the recorded issue is closed")
	assert.Empty(t, is.Labels)
	assert.Equal(t, []string{"lennie"}, is.Assignees)
	assert.Equal(t, []string{"14", "other-group/api#3"}, is.BlockedBy, "open blockers; another project's by its full reference")
}

func TestRecordedUserIsRead(t *testing.T) {
	c := replay(t, map[string][]byte{"GET /api/v4/user": recorded(t, "user.json")})
	me, err := c.Me(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "john_smith", me)
}

func TestRecordedMergeRequestIsRead(t *testing.T) {
	c := replay(t, map[string][]byte{"GET /api/v4/projects/my-group%2Fmy-project/merge_requests/14656": recorded(t, "merge_request.json")})
	pr, err := c.Pulls().Get(t.Context(), 14656)
	require.NoError(t, err)
	assert.Equal(t, forge.PullRequest{Number: 14656, URL: "https://gitlab.com/gitlab-org/gitlab-ee/merge_requests/14656",
		State: forge.StateOpen, Conflicts: true, Head: "delete-designs-v2", Base: "master",
		HeadSHA: "8e0b45049b6253b8984cde9241830d2851168142"}, pr)
}

func TestRecordedMergeRequestListIsRead(t *testing.T) {
	c := replay(t, map[string][]byte{"GET /api/v4/projects/my-group%2Fmy-project/merge_requests": recorded(t, "merge_requests.json")})
	var list []map[string]any
	require.NoError(t, json.Unmarshal(recorded(t, "merge_requests.json"), &list))
	first := list[0]
	pr, err := c.Pulls().Open(t.Context(), forge.Change{Head: first["source_branch"].(string), Base: first["target_branch"].(string)})
	require.NoError(t, err, "the open merge request between the branches is found, none opened")
	assert.Equal(t, int(first["iid"].(float64)), pr.Number)
	assert.Equal(t, first["sha"], pr.HeadSHA)
	assert.Equal(t, first["web_url"], pr.URL)
}

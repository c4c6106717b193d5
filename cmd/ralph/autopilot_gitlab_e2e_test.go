package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fake "github.com/ralph-loop/ralph/internal/fakeforge/gitlab"
)

// The autopilot working through a GitLab project's issues, on the fake
// GitLab (internal/fakeforge/gitlab), merging into the local base branch
// (deliver: merge).

const (
	gitlabToken        = "glpat-e2e-Zx81kQ3vT0pLmN6rWq"
	gitlabDeploySecret = "deploy-key-9f3a7c1e5b2d8a4f6c0e"
)

// A backlog of labelled issues with priorities and one dependency: the
// dry run says what would be claimed and writes nothing; the run waits
// out GitLab's rate limit, saying so, then works the issues in priority
// order, the blocked one once its blocker is closed; each is claimed
// (assigned, with a note) and closed with a note naming its merge, or,
// when its verification fails, told why (its secret hidden) and
// unassigned. The token is nowhere but in the requests' header.
func TestAutopilotWorksThroughGitLabIssues(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t, fake.Options{Project: "acme/web-app", Token: gitlabToken, Premium: true})
	low := srv.AddIssue(fake.NewIssue{Title: "Low", Labels: []string{"ralph", "P3", "component:app"}})
	urgent := srv.AddIssue(fake.NewIssue{Title: "Urgent", Labels: []string{"ralph", "P0", "component:app"}})
	next := srv.AddIssue(fake.NewIssue{Title: "After urgent", Labels: []string{"ralph", "P0", "component:app"}})
	bad := srv.AddIssue(fake.NewIssue{Title: "Bad", Labels: []string{"ralph", "P1", "component:app"}})
	unlabelled := srv.AddIssue(fake.NewIssue{Title: "Not for ralph", Labels: []string{"P0"}})
	alices := srv.AddIssue(fake.NewIssue{Title: "Alice's", Labels: []string{"ralph", "P0"}, Assignees: []string{"alice"}})
	srv.Block(next, urgent)

	// The issues share a component, so each is merged and closed before
	// the next starts: the order of work is the order of the backlog.
	w := newAutopilotRepo(t, "  source: {type: gitlab, project: acme/web-app, labels: [ralph], api_url: \""+srv.URL+
		"\", token_env: ACME_GITLAB_TOKEN}\n"+
		"  verify:\n    - {type: command_succeeds, command: 'test ! -e 4.txt || { echo \"deploy key $DEPLOY_SECRET_KEY was refused\"; exit 1; }'}\n")
	w.script(taskAgent("0"))
	env := []string{"ACME_GITLAB_TOKEN=" + gitlabToken, "DEPLOY_SECRET_KEY=" + gitlabDeploySecret}

	dry := w.ralphEnv(env, "autopilot", "--dry-run")
	require.Equal(t, 0, dry.code, "stdout:\n%s\nstderr:\n%s", dry.stdout, dry.stderr)
	assert.Contains(t, dry.stdout, "2 (Urgent) [P0]: starts in slot 1")
	assert.Contains(t, dry.stdout, "4 (Bad) [P1]: held until 2")
	assert.Contains(t, dry.stdout, "1 (Low) [P3]: held until 2")
	assert.Contains(t, dry.stdout, "3 (After urgent): waits for 2")
	assert.Empty(t, srv.Writes(), "the dry run calls no write endpoint")

	srv.RefuseNext(fake.RateLimited(1))
	r := w.ralphEnv(env, "autopilot")
	require.Equal(t, 1, r.code, "a task failed; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `ralph: autopilot: gitlab's rate limit: waiting 1s \(GET /api/v4/\S+ answered 429, retry after 1\)`, r.stderr)

	assert.Equal(t, []string{"2", "3", "1"}, w.mergedOrder())
	assert.Equal(t, []string{"2", "3", "4", "1"}, claimOrder(srv), "P0, the P0 its blocker's close freed, P1, P3")

	for iid, title := range map[int]string{urgent: "Urgent", next: "After urgent", low: "Low"} {
		st := srv.Issue(iid)
		assert.Equal(t, "closed", st.State, title)
		assert.Equal(t, []string{"ralph-bot"}, st.Assignees, title)
		require.Len(t, st.Notes, 2, title)
		assert.Equal(t, "ralph is working on this.", st.Notes[0])
		commit := mergeOf(w, iid)
		assert.Regexp(t, `^Done by ralph: merged into main by ralph autopilot as [0-9a-f]{12}$`, st.Notes[1])
		assert.True(t, strings.HasPrefix(commit, st.Notes[1][len(st.Notes[1])-12:]), "%s's note names its merge %s: %s", title, commit, st.Notes[1])
	}

	failed := srv.Issue(bad)
	assert.Equal(t, "opened", failed.State)
	assert.Empty(t, failed.Assignees, "a failed issue is given back")
	require.Len(t, failed.Notes, 2)
	assert.Contains(t, failed.Notes[1], "ralph gave up on this: verification of the merged result failed")
	assert.Contains(t, failed.Notes[1], "deploy key [redacted:DEPLOY_SECRET_KEY] was refused")

	assert.Equal(t, fake.IssueState{State: "opened", Labels: []string{"P0"}}, srv.Issue(unlabelled))
	assert.Equal(t, fake.IssueState{State: "opened", Labels: []string{"ralph", "P0"}, Assignees: []string{"alice"}}, srv.Issue(alices))

	for _, req := range srv.Requests() {
		assert.NotContains(t, req.Path+req.Body, gitlabDeploySecret, "GitLab is told no secret")
		assert.NotContains(t, req.Path+req.Body, gitlabToken, "the token goes in its header only")
	}
	for name, text := range map[string]string{"dry run's output": dry.stdout + dry.stderr, "run's output": r.stdout + r.stderr,
		"git history": git(t, w.dir, "log", "--all", "-p", "--format=%H %an %ae%n%B")} {
		assert.NotContains(t, text, gitlabToken, name)
		assert.NotContains(t, text, gitlabDeploySecret, name)
	}
	assertNoFileHolds(t, w.dir, gitlabToken, gitlabDeploySecret)
}

// claimOrder is the order ralph claimed the fake's issues in: its notes
// saying it works on them.
func claimOrder(srv *fake.Server) []string {
	claim := regexp.MustCompile(`^/api/v4/projects/acme%2Fweb-app/issues/(\d+)/notes$`)
	var out []string
	for _, req := range srv.Requests() {
		if m := claim.FindStringSubmatch(req.Path); m != nil && req.Method == "POST" && strings.Contains(req.Body, "ralph is working on this.") {
			out = append(out, m[1])
		}
	}
	return out
}

// mergeOf is the commit ralph merged task into main with.
func mergeOf(w *workspace, iid int) string {
	w.t.Helper()
	for line := range strings.Lines(git(w.t, w.dir, "log", "--first-parent", "--format=%H %s", "main")) {
		hash, subject, _ := strings.Cut(strings.TrimSpace(line), " ")
		if rest, ok := strings.CutPrefix(subject, "ralph: merge "); ok && strings.Fields(rest)[0] == strconv.Itoa(iid) {
			return hash
		}
	}
	w.t.Fatalf("no merge of %d on main", iid)
	return ""
}

// assertNoFileHolds checks that no file under dir (the repository, its
// worktrees and .ralph) holds any of secrets as written.
func assertNoFileHolds(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			assert.NotContains(t, string(data), s, "%s holds a secret", path)
		}
		return nil
	}))
}

// deliver: pr on GitLab: each issue becomes a merge request on the
// project's repository, the autopilot's own branch left alone; the one a
// reviewer merges closes its issue with a note naming it, the one turned
// down gives its issue back, unassigned, to do again.
func TestAutopilotDeliversGitLabIssuesAsMergeRequests(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "origin.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", remote)
	srv := fake.Start(t, fake.Options{Project: "acme/web-app", Token: gitlabToken, Repo: remote})
	accepted := srv.AddIssue(fake.NewIssue{Title: "Accepted", Labels: []string{"ralph", "P0"}})
	refused := srv.AddIssue(fake.NewIssue{Title: "Refused", Labels: []string{"ralph", "P1"}})
	w := newAutopilotRepo(t, "  source: {type: gitlab, project: acme/web-app, labels: [ralph], api_url: \""+srv.URL+
		"\", token_env: ACME_GITLAB_TOKEN}\n  deliver: pr\n  pr: {close_on: merged, labels: [ralph-mr], poll_seconds: 1}\n")
	git(t, w.dir, "remote", "add", "origin", remote)
	git(t, w.dir, "push", "-q", "origin", "main")
	w.script(prAgent)
	mainBefore := git(t, w.dir, "rev-parse", "main")

	cmd, stderr := w.startRalphEnv([]string{"ACME_GITLAB_TOKEN=" + gitlabToken}, "autopilot", "--parallel", "1")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the autopilot's output:\n%s", stderr.String())
		}
	})
	// With close_on: merged a slot is free once its merge request is open.
	waitFor(t, "a merge request for each issue", func() bool { return srv.MRs() == 2 })
	mrOf := map[int]int{}
	for iid := 1; iid <= 2; iid++ {
		mr := srv.MR(iid)
		assert.Equal(t, "opened", mr.State)
		assert.Equal(t, "main", mr.Target)
		assert.Equal(t, []string{"ralph-mr"}, mr.Labels)
		task, ok := strings.CutPrefix(mr.Source, "ralph/")
		require.True(t, ok, "merge request !%d is from %s", iid, mr.Source)
		n, err := strconv.Atoi(task)
		require.NoError(t, err)
		mrOf[n] = iid
		assert.Equal(t, map[int]string{accepted: "Accepted", refused: "Refused"}[n]+" (#"+task+")", mr.Title)
		assert.Contains(t, mr.Description, "ralph autopilot did task `"+task+"` from gitlab")
	}
	merge := srv.MergeMR(mrOf[accepted])
	srv.CloseMR(mrOf[refused])

	require.Equal(t, 1, exitCodeOf(cmd.Wait()), "one merge request was closed unmerged\nstderr:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), fmt.Sprintf("%d (Accepted): merge request !%d waits for review", accepted, mrOf[accepted]),
		"named as GitLab names it: its #%d is an issue", mrOf[accepted])
	done := srv.Issue(accepted)
	assert.Equal(t, "closed", done.State)
	assert.Equal(t, []string{"ralph-bot"}, done.Assignees, "claimed by assigning it")
	require.Len(t, done.Notes, 2)
	assert.Equal(t, "ralph is working on this.", done.Notes[0])
	assert.Contains(t, done.Notes[1], "Done by ralph: merge request !"+strconv.Itoa(mrOf[accepted])+" merged into main as "+merge[:12])

	back := srv.Issue(refused)
	assert.Equal(t, "opened", back.State, "a merge request closed unmerged leaves its issue to do again")
	assert.Empty(t, back.Assignees, "unassigned")
	assert.Contains(t, back.Notes[len(back.Notes)-1], "ralph reopened this: its merge request !"+strconv.Itoa(mrOf[refused])+
		" was closed without being merged")

	assert.Equal(t, strconv.Itoa(accepted), git(t, remote, "show", "main:"+strconv.Itoa(accepted)+".txt"), "the reviewer's merge holds the work")
	assert.Equal(t, mainBefore, git(t, w.dir, "rev-parse", "main"), "main here never moved")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")))
	for _, req := range srv.Requests() {
		assert.NotContains(t, req.Path+req.Body, gitlabToken, "the token goes in its header only")
	}
	assertNoFileHolds(t, w.dir, gitlabToken)
}

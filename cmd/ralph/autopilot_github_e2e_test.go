package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fakegithub "github.com/ralph-loop/ralph/internal/fakeforge/github"
)

// The GitHub source end to end: the real binary works through the issues
// of a fake GitHub (internal/fakeforge/github) named by api_url, with the
// token read from the variable token_env names.

const (
	githubTokenEnv = "ACME_GH_TOKEN"
	githubToken    = "ghp_e2eFakeToken0123456789abcdefABCDEF"
	// deployKey is a secret of the environment that a failing task's
	// verification prints: the tracker must never be told it.
	deployKeyEnv = "ACME_DEPLOY_KEY"
	deployKey    = "dk-live-7f3a9c2e5b1d8046"
)

// githubBacklog is a fake GitHub with a backlog of labelled issues, and
// a repository whose autopilot works through them; extra is added to its
// autopilot section.
func githubBacklog(t *testing.T, extra string) (*workspace, *fakegithub.Server) {
	t.Helper()
	srv := fakegithub.New(t, fakegithub.Options{Repo: "acme/widgets", Token: githubToken, User: "ralph-bot"})
	w := newAutopilotRepo(t, "  source:\n    type: github\n    repo: acme/widgets\n    labels: [ralph]\n"+
		"    token_env: "+githubTokenEnv+"\n    api_url: "+srv.URL()+"\n"+extra)
	w.script(taskAgent("0"))
	return w, srv
}

// githubEnv is the environment of a ralph that works through the fake.
func githubEnv() []string {
	return []string{githubTokenEnv + "=" + githubToken, deployKeyEnv + "=" + deployKey}
}

func TestAutopilotWorksThroughGitHubIssues(t *testing.T) {
	t.Parallel()
	w, srv := githubBacklog(t, "  verify:\n"+
		`    - {type: command_succeeds, command: "if [ -e 5.txt ]; then echo \"deploy key $`+deployKeyEnv+` was refused\"; exit 1; fi"}`+"\n")
	label := func(p string) []string { return []string{"ralph", p} }
	medium := srv.AddIssue(fakegithub.Issue{Title: "Medium", Labels: label("P2")})    // 1
	urgent := srv.AddIssue(fakegithub.Issue{Title: "Urgent", Labels: label("P0")})    // 2
	after := srv.AddIssue(fakegithub.Issue{Title: "After base", Labels: label("P1")}) // 3
	base := srv.AddIssue(fakegithub.Issue{Title: "Base", Labels: label("P3")})        // 4
	bad := srv.AddIssue(fakegithub.Issue{Title: "Bad", Labels: label("P3")})          // 5: its verification fails
	other := srv.AddIssue(fakegithub.Issue{Title: "A question", Labels: []string{"question"}})
	require.NoError(t, srv.Block(after, base))
	require.Equal(t, "5", bad)
	// The first request is refused for a rate limit of a second.
	srv.RefuseNext(fakegithub.SecondaryRateLimit(429, 1))

	r := w.ralphEnv(githubEnv(), "autopilot", "--parallel", "1")
	require.Equal(t, 1, r.code, "a task failed\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "ralph: autopilot: github's rate limit: waiting 1s (", "the wait is said")
	assert.Contains(t, r.stderr, "answered 429, retry after 1)")

	order := w.mergedOrder()
	require.Len(t, order, 4, "all but the failing one merged: %v", order)
	assert.Equal(t, urgent, order[0], "P0 first")
	assert.Less(t, slices.Index(order, medium), slices.Index(order, base), "P2 before P3")
	assert.Less(t, slices.Index(order, base), slices.Index(order, after), "a P1 issue waits for the issue it is blocked by")
	merges := w.ralphMergeCommits()
	for _, id := range order {
		is, _ := srv.Issue(id)
		assert.Equal(t, "closed", is.State, id)
		assert.Equal(t, "completed", is.StateReason, id)
		assert.Equal(t, []string{"ralph-bot"}, is.Assignees, "%s was claimed by assigning it", id)
		assert.Equal(t, []string{"ralph is working on this.", "Done by ralph: merged into main by ralph autopilot as " + merges[id][:12]},
			srv.Comments(id), "%s: claimed with a comment, closed with one naming its merge", id)
	}

	failed, _ := srv.Issue(bad)
	assert.Equal(t, "open", failed.State, "a failed task stays open")
	assert.Empty(t, failed.Assignees, "and is unassigned")
	comments := srv.Comments(bad)
	require.Len(t, comments, 2)
	assert.Contains(t, comments[1], "ralph gave up on this: verification of the merged result failed")
	assert.Contains(t, comments[1], "deploy key [redacted:"+deployKeyEnv+"] was refused", "the reason, its secret hidden")
	untouched, _ := srv.Issue(other)
	assert.Empty(t, untouched.Assignees)
	assert.Empty(t, srv.Comments(other), "an issue without the label is not ralph's")

	for _, req := range srv.Requests() {
		assert.NotContains(t, req.Path+req.Body, deployKey, "GitHub was never told the secret")
	}
	assertTokenNowhere(t, w, r)
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")), "a forge source commits nothing")
}

// ralphMergeCommits maps each task merged into main to its merge commit.
func (w *workspace) ralphMergeCommits() map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(git(w.t, w.dir, "log", "--first-parent", "--format=%H %(trailers:key=Ralph-Task,valueonly,separator=)", "main")) {
		hash, task, _ := strings.Cut(strings.TrimSpace(line), " ")
		if task != "" {
			out[task] = hash
		}
	}
	return out
}

// assertTokenNowhere checks that the token is in no file under .ralph/,
// nothing ralph printed, and nothing in git.
func assertTokenNowhere(t *testing.T, w *workspace, r result) {
	t.Helper()
	assert.NotContains(t, r.stdout+r.stderr, githubToken)
	require.NoError(t, filepath.WalkDir(filepath.Join(w.dir, ".ralph"), func(path string, d os.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == filepath.Join(w.dir, ".ralph") {
			return nil // a dry run makes none
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		assert.NotContains(t, string(data), githubToken, path)
		return err
	}))
	assert.NotContains(t, git(t, w.dir, "log", "--all", "-p"), githubToken)
}

func TestAutopilotDryRunOfGitHubIssuesWritesNothing(t *testing.T) {
	t.Parallel()
	w, srv := githubBacklog(t, "")
	first := srv.AddIssue(fakegithub.Issue{Title: "First", Labels: []string{"ralph", "P1"}})
	waits := srv.AddIssue(fakegithub.Issue{Title: "Waits", Labels: []string{"ralph", "P0"}})
	upstream := srv.AddIssue(fakegithub.Issue{Repo: "acme/lib", Title: "Upstream"})
	require.NoError(t, srv.Block(waits, first))
	require.NoError(t, srv.Block(waits, upstream))
	before := snapshot(t, w.dir)

	r := w.ralphEnv(githubEnv(), "autopilot", "--dry-run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, first+" (First) [P1]: starts in slot 1")
	assert.Contains(t, r.stdout, waits+" (Waits): waits for "+first+", acme/lib#1")
	assert.Empty(t, srv.Writes(), "the dry run called no write endpoint")
	assert.NotEmpty(t, srv.Requests())
	assert.Equal(t, before, snapshot(t, w.dir), "the repository is as it was")
	assertTokenNowhere(t, w, r)
}

func TestAutopilotSaysWhichVariableLacksTheGitHubToken(t *testing.T) {
	t.Parallel()
	w, srv := githubBacklog(t, "")
	srv.AddIssue(fakegithub.Issue{Title: "First", Labels: []string{"ralph"}})
	r := w.ralphEnv([]string{githubTokenEnv + "="}, "autopilot")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph: error: github: $"+githubTokenEnv+" is not set, and it holds the API token")
	assert.Contains(t, r.stderr, "ralph: hint: export "+githubTokenEnv+"=")
	assert.Empty(t, srv.Requests())
}

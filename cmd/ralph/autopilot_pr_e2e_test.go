package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fakegithub "github.com/ralph-loop/ralph/internal/fakeforge/github"
	"github.com/ralph-loop/ralph/runfiles"
)

// deliver: pr end to end: the real binary works through the issues of a
// fake GitHub whose pull requests live on a real bare repository, the
// remote the autopilot pushes to; the test merges, closes and moves the
// base under the pull requests as people would.

// githubPRs is a fake GitHub on a bare origin, and a repository whose
// autopilot works through its issues and delivers them as pull requests.
func githubPRs(t *testing.T) (*workspace, *fakegithub.Server, string) {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "origin.git")
	git(t, t.TempDir(), "init", "-q", "--bare", remote)
	srv := fakegithub.New(t, fakegithub.Options{Repo: "acme/widgets", Token: githubToken, User: "ralph-bot", Git: remote})
	w := newAutopilotRepo(t, "  source:\n    type: github\n    repo: acme/widgets\n    labels: [ralph]\n"+
		"    token_env: "+githubTokenEnv+"\n    api_url: "+srv.URL()+"\n"+
		"  deliver: pr\n  pr: {close_on: merged, labels: [ralph-pr], poll_seconds: 1}\n")
	git(t, w.dir, "remote", "add", "origin", remote)
	git(t, w.dir, "push", "-q", "origin", "main")
	w.script(prAgent)
	return w, srv, remote
}

// startRalphEnv is startRalph with env added to ralph's environment.
func (w *workspace) startRalphEnv(env []string, args ...string) (*exec.Cmd, *lockedWriter) {
	w.t.Helper()
	cmd := exec.Command(ralphBin, args...)
	cmd.Dir = w.dir
	cmd.Env = append(append(os.Environ(), scriptEnv(w.state)...), env...)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	require.NoError(w.t, cmd.Start())
	w.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stderr
}

// prAgent does a task by writing <task>.txt and committing it; sent back
// with a merge of the base in progress, it keeps both sides' lines.
var prAgent = agentScript{Steps: []step{{
	Sh: `task=$(basename "$PWD"); if git rev-parse -q --verify MERGE_HEAD >/dev/null; then ` +
		`printf 'theirs\n%s\n' "$task" > "$task.txt"; else echo "$task" > "$task.txt"; fi`,
	Commit: "do the task",
	Say:    `<event topic="LOOP_COMPLETE">done</event>`,
}}}

// openPR waits for the open pull request of task and returns it.
func openPR(t *testing.T, srv *fakegithub.Server, task string) fakegithub.PullRequest {
	t.Helper()
	var pr fakegithub.PullRequest
	waitFor(t, "the pull request of "+task, func() bool {
		var ok bool
		pr, ok = srv.OpenPR("ralph/"+task, "main")
		return ok
	})
	return pr
}

func TestAutopilotDeliversGitHubIssuesAsPullRequests(t *testing.T) {
	t.Parallel()
	w, srv, remote := githubPRs(t)
	label := func(p string) []string { return []string{"ralph", p} }
	urgent := srv.AddIssue(fakegithub.Issue{Title: "Urgent", Labels: label("P0")})        // 1
	medium := srv.AddIssue(fakegithub.Issue{Title: "Medium", Labels: label("P2")})        // 2: its pull request is closed
	base := srv.AddIssue(fakegithub.Issue{Title: "Base", Labels: label("P2")})            // 3
	after := srv.AddIssue(fakegithub.Issue{Title: "After base", Labels: label("P1")})     // 4: waits for 3
	moved := srv.AddIssue(fakegithub.Issue{Title: "Moved under it", Labels: label("P3")}) // 5: its base moves and it conflicts
	require.NoError(t, srv.Block(after, base))
	mainBefore := git(t, w.dir, "rev-parse", "main")

	cmd, stderr := w.startRalphEnv(githubEnv(), "autopilot", "--parallel", "1")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the autopilot's output:\n%s", stderr.String())
		}
	})
	// With close_on: merged a slot is free once its pull request is open:
	// every ready issue gets one, in priority order; 4 waits for 3.
	prs := map[string]fakegithub.PullRequest{}
	for _, id := range []string{urgent, base, medium, moved} {
		prs[id] = openPR(t, srv, id)
	}
	_, early := srv.OpenPR("ralph/"+after, "main")
	assert.False(t, early, "an issue blocked by an open one waits")

	merged1, err := srv.MergePR(prs[urgent].Number)
	require.NoError(t, err)
	require.NoError(t, srv.ClosePR(prs[medium].Number))
	// Somebody changes main under 5's pull request, in its own file.
	_, err = srv.PushToBase("main", moved+".txt", "theirs\n", "their "+moved+".txt")
	require.NoError(t, err)
	waitFor(t, "5's pull request to be brought up to date", func() bool {
		pr, ok := srv.PR(prs[moved].Number)
		return ok && pr.HeadSHA != prs[moved].HeadSHA && pr.Mergeable != nil && *pr.Mergeable
	})
	merged5, err := srv.MergePR(prs[moved].Number)
	require.NoError(t, err)
	merged3, err := srv.MergePR(prs[base].Number)
	require.NoError(t, err)
	prs[after] = openPR(t, srv, after)
	merged4, err := srv.MergePR(prs[after].Number)
	require.NoError(t, err)

	require.Equal(t, 1, exitCodeOf(cmd.Wait()), "one pull request was closed unmerged\nstderr:\n%s", stderr.String())

	all := srv.PRs()
	assert.Len(t, all, 5, "one pull request per issue, the conflicting one updated rather than opened again")
	for _, pr := range all {
		assert.Equal(t, "main", pr.Base)
		assert.Equal(t, []string{"ralph-pr"}, pr.Labels)
		task := strings.TrimPrefix(pr.Head, "ralph/")
		is, _ := srv.Issue(task)
		assert.Equal(t, is.Title+" (#"+task+")", pr.Title)
		assert.Contains(t, pr.Body, "ralph autopilot did task `"+task+"` from github")
		assert.Contains(t, pr.Body, "- ended: completed (exit 0)")
	}
	for id, commit := range map[string]string{urgent: merged1, moved: merged5, base: merged3, after: merged4} {
		is, _ := srv.Issue(id)
		assert.Equal(t, "closed", is.State, id)
		assert.Equal(t, []string{"ralph-bot"}, is.Assignees, "%s was claimed by assigning it", id)
		url := prs[id].URL
		assert.Equal(t, []string{"ralph is working on this.",
			"Done by ralph: pull request #" + strconv.Itoa(prs[id].Number) + " merged into main as " + commit[:12] + ": " + url},
			srv.Comments(id), "%s: closed with a link to its pull request and its merge", id)
	}
	rejected, _ := srv.Issue(medium)
	assert.Equal(t, "open", rejected.State, "a pull request closed unmerged leaves its issue to do again")
	assert.Empty(t, rejected.Assignees, "unassigned")
	assert.Contains(t, srv.Comments(medium), "ralph reopened this: its pull request #"+strconv.Itoa(prs[medium].Number)+
		" was closed without being merged: "+prs[medium].URL)

	evs := autopilotEvents(t, w)
	assert.Equal(t, map[string]int{moved: 1}, countTopic(evs, runfiles.TopicTaskPRConflicted))
	assert.Equal(t, 1, countTopic(evs, runfiles.TopicTaskRetry)[moved], "the conflicting merge went back to its loop")
	var completed []string
	for _, ev := range evs {
		if ev.Topic == runfiles.TopicTaskCompleted || ev.Topic == runfiles.TopicTaskAssigned {
			completed = append(completed, ev.Topic+" "+runfiles.DecodeAutopilotPayload(ev).Task)
		}
	}
	assert.Less(t, slices.Index(completed, "task.completed "+base), slices.Index(completed, "task.assigned "+after),
		"4 starts once 3 is done: %v", completed)
	assert.Equal(t, "theirs\n"+moved, git(t, remote, "show", "main:"+moved+".txt"), "the agent kept their line and its own")

	assert.Equal(t, mainBefore, git(t, w.dir, "rev-parse", "main"), "main here never moved")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")))
	assertTokenNowhere(t, w, result{stderr: stderr.String()})
	for _, req := range srv.Requests() {
		assert.NotContains(t, req.Path+req.Body, githubToken)
	}
	r := w.ralph("autopilot", "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "4 completed, 1 failed")
}

// The dry run of deliver: pr on GitHub issues says what it would claim
// and how it would deliver, and writes nothing, to GitHub or here.
func TestAutopilotDryRunOfPullRequestsWritesNothing(t *testing.T) {
	t.Parallel()
	w, srv, _ := githubPRs(t)
	first := srv.AddIssue(fakegithub.Issue{Title: "First", Labels: []string{"ralph", "P1"}})
	srv.AddIssue(fakegithub.Issue{Title: "Second", Labels: []string{"ralph", "P2"}})
	before := snapshot(t, w.dir)
	r := w.ralphEnv(githubEnv(), "autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "claimed in github at once: "+first+"; the others as slots free\n")
	assert.Contains(t, r.stdout, "delivery: pr: each verified merge is pushed to origin as ralph/<task> and a pull request opened on github "+
		"acme/widgets onto main; the task closes once it is merged (ralph follows it); labels: ralph-pr; main here does not move\n")
	assert.Empty(t, srv.Writes(), "no write endpoint was called")
	assert.Equal(t, before, snapshot(t, w.dir))
	assertTokenNowhere(t, w, r)
}

package autopilot

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/forgetest"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// prHarness is a harness whose tasks are issues of an in-memory forge,
// delivered as its pull requests, with a bare origin behind it.
type prHarness struct {
	*harness
	forge        *forgetest.Forge
	remote, base string
}

func newPRHarness(t *testing.T, ids ...string) *prHarness {
	h := newHarness(t)
	f := forgetest.New("ralph-bot")
	for i, id := range ids {
		f.Add(forge.Issue{ID: id, Title: "Task " + id, Body: "Do " + id + ".\n\n## Acceptance criteria\n\n- it is done\n",
			URL: "https://forge.test/issues/" + id, Priority: i})
	}
	h.src, h.pulls = tasks.NewForgeSource("github", f, ""), f.Pulls()
	remote, base := withRemote(t, h)
	return &prHarness{harness: h, forge: f, remote: remote, base: base}
}

func (h *prHarness) prSettings(closeOn string) config.Autopilot {
	s := h.settings(1)
	s.Deliver, s.Remote = "pr", "origin"
	s.PR = config.PullRequests{CloseOn: closeOn, Labels: []string{"ralph"}, PollSeconds: 1}
	return s
}

// merge merges pull request n on the remote as a person would, and tells
// the forge.
func (h *prHarness) merge(n int) string {
	h.t.Helper()
	pr, err := h.forge.PR(h.t.Context(), n)
	require.NoError(h.t, err)
	person := filepath.Join(h.t.TempDir(), "person")
	gittest.Run(h.t, h.t.TempDir(), "clone", "-q", h.remote, person)
	gittest.Run(h.t, person, "-c", "user.name=P", "-c", "user.email=p@example.com", "merge", "--no-ff", "-q", "-m",
		"Merge pull request", "origin/"+pr.Head)
	gittest.Run(h.t, person, "push", "-q", "origin", "HEAD:"+h.base)
	commit := gittest.Run(h.t, person, "rev-parse", "HEAD")
	h.forge.SetPR(n, func(pr *forge.PullRequest) { pr.State, pr.MergeCommit = forge.StateMerged, commit })
	return commit
}

func (h *prHarness) calls(prefix string) []string {
	var out []string
	for _, c := range h.forge.Calls() {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

func TestPRDeliversATaskAndClosesItOnceMerged(t *testing.T) {
	h := newPRHarness(t, "1", "2")
	before := gittest.Run(t, h.repo, "rev-parse", h.base)
	h.start(t.Context(), h.prSettings("merged"))

	h.loop().complete()
	pushed := payloadOf(h.next(runfiles.TopicMergePushed))
	assert.Equal(t, "ralph/1", pushed.Branch)
	opened := payloadOf(h.next(runfiles.TopicTaskPROpened))
	assert.Equal(t, 1, opened.Number)
	assert.Equal(t, "https://forge.test/pull/1", opened.URL)
	assert.Equal(t, pushed.Commit, gittest.Run(t, h.remote, "rev-parse", "ralph/1"), "the verified merge is the pull request's branch")
	assert.Equal(t, []string{"open pr ralph/1 → " + h.base + ": Task 1 (#1)"}, h.calls("open pr"))
	assert.Equal(t, before, gittest.Run(t, h.repo, "rev-parse", h.base), "the local base branch never moves")
	issue, err := h.forge.Issue(t.Context(), "1")
	require.NoError(t, err)
	assert.True(t, issue.Open, "the task waits for its pull request to be merged")
	assert.Equal(t, []string{"ralph-bot"}, issue.Assignees)
	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	require.Len(t, st.Reviews, 1)
	assert.Equal(t, "1", st.Reviews[0].Task)
	assert.Equal(t, "https://forge.test/pull/1", st.Reviews[0].PR.URL)

	// The slot is free while the first waits for review.
	h.loop().complete()
	assert.Equal(t, 2, payloadOf(h.next(runfiles.TopicTaskPROpened)).Number)

	merged := h.merge(1)
	done := payloadOf(h.next(runfiles.TopicTaskCompleted))
	assert.Equal(t, "1", done.Task)
	assert.Equal(t, merged, done.Commit)
	assert.Equal(t, "https://forge.test/pull/1", done.URL)
	issue, err = h.forge.Issue(t.Context(), "1")
	require.NoError(t, err)
	assert.False(t, issue.Open)
	assert.Contains(t, h.calls("comment 1:"), "comment 1: Done by ralph: pull request #1 merged into "+h.base+" as "+merged[:12]+": https://forge.test/pull/1")

	h.forge.SetPR(2, func(pr *forge.PullRequest) { pr.State = forge.StateClosed })
	failed := payloadOf(h.next(runfiles.TopicTaskFailed))
	assert.Equal(t, "2", failed.Task)
	assert.Equal(t, "its pull request #2 was closed without being merged: https://forge.test/pull/2", failed.Reason)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{ExitCode: exitcode.Failure, Completed: 1, Failed: 1}, res, "the run follows its pull requests to the end")
	issue, err = h.forge.Issue(t.Context(), "2")
	require.NoError(t, err)
	assert.True(t, issue.Open)
	assert.Empty(t, issue.Assignees, "reopened and unassigned, ready for another run")
	assert.Contains(t, h.calls("comment 2:"), "comment 2: ralph reopened this: "+failed.Reason)
	assert.Equal(t, before, gittest.Run(t, h.repo, "rev-parse", h.base), "the local base branch never moved")
}

func TestPROpenedClosesTheTaskAtOnce(t *testing.T) {
	h := newPRHarness(t, "7")
	h.start(t.Context(), h.prSettings("opened"))
	h.loop().complete()
	h.next(runfiles.TopicTaskPROpened)
	done := payloadOf(h.next(runfiles.TopicTaskCompleted))
	assert.Equal(t, "https://forge.test/pull/1", done.URL)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 1}, res)
	assert.Contains(t, h.calls("comment 7:"), "comment 7: Done by ralph: delivered by ralph autopilot as pull request #1: https://forge.test/pull/1")
	assert.NotEmpty(t, gittest.Run(t, h.remote, "rev-parse", "ralph/7"), "the pull request's branch stays")
	assert.NoDirExists(t, filepath.Join(h.repo, ".worktrees", "7"))
	pr, err := h.forge.PR(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, forge.StateOpen, pr.State)
}

// A pull request whose base moved and that no longer merges is made again
// on the new tip, verified, and pushed over the head ralph gave it; the
// pull request is the same one.
func TestPRThatConflictsIsMadeAgainOnTheNewBase(t *testing.T) {
	h := newPRHarness(t, "3")
	h.start(t.Context(), h.prSettings("merged"))
	h.loop().complete()
	first := payloadOf(h.next(runfiles.TopicTaskPROpened))

	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, t.TempDir(), "clone", "-q", h.remote, other)
	gittest.Run(t, other, "-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-q", "--allow-empty", "-m", "their work")
	gittest.Run(t, other, "push", "-q", "origin", "HEAD:"+h.base)
	moved := gittest.Run(t, other, "rev-parse", "HEAD")
	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.Conflicts, pr.HeadSHA = true, first.Commit })

	conflicted := payloadOf(h.next(runfiles.TopicTaskPRConflicted))
	assert.Equal(t, first.Commit, conflicted.Commit)
	again := payloadOf(h.next(runfiles.TopicTaskPROpened))
	assert.Equal(t, 1, again.Number, "the same pull request")
	head := gittest.Run(t, h.remote, "rev-parse", "ralph/3")
	assert.Equal(t, again.Commit, head)
	assert.NotEqual(t, first.Commit, head)
	assert.Equal(t, moved, gittest.Run(t, h.remote, "rev-parse", "ralph/3^1"), "made on the base's new tip")
	assert.Len(t, h.calls("open pr"), 1)

	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.Conflicts = false })
	h.merge(1)
	h.next(runfiles.TopicTaskCompleted)
	assert.Equal(t, Result{Completed: 1}, h.wait())
}

// The pull requests a run leaves open (it was stopped while it followed
// them) are followed by the next run, a new one.
func TestPRFollowedByTheNextRun(t *testing.T) {
	h := newPRHarness(t, "5")
	h.start(t.Context(), h.prSettings("merged"))
	h.loop().complete()
	h.next(runfiles.TopicTaskPROpened)
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlStop))
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{}, res, "stopped: nothing completed, nothing failed")

	again := &harness{t: t, repo: h.repo, source: h.source, src: h.src, pulls: h.pulls, runner: h.runner,
		events: make(chan events.Event, 1000), done: make(chan struct{})}
	again.start(t.Context(), h.prSettings("merged"))
	again.next(runfiles.TopicAutopilotStarted)
	h.merge(1)
	done := payloadOf(again.next(runfiles.TopicTaskCompleted))
	assert.Equal(t, "5", done.Task)
	assert.Equal(t, Result{Completed: 1}, again.wait())
	assert.Empty(t, h.runner.started, "the task did not run again")
	starts := slices.DeleteFunc(h.calls("assign"), func(c string) bool { return c != "assign 5 ralph-bot" })
	assert.Len(t, starts, 1, "claimed once")
}

// Somebody's push to an open pull request's branch is theirs: a conflict
// of that pull request is not rebased over it.
func TestPRWithSomebodysCommitsIsNotRebased(t *testing.T) {
	h := newPRHarness(t, "4")
	h.start(t.Context(), h.prSettings("merged"))
	h.loop().complete()
	h.next(runfiles.TopicTaskPROpened)
	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.Conflicts, pr.HeadSHA = true, strings.Repeat("f", 40) })
	notice := payloadOf(h.next(runfiles.TopicAutopilotNotice))
	assert.Contains(t, notice.Message, "4's pull request #1 conflicts with "+h.base+", but somebody pushed to ralph/4 since ralph did")
	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.State = forge.StateClosed })
	h.next(runfiles.TopicTaskFailed)
	assert.Equal(t, exitcode.Failure, h.wait().ExitCode)
	assert.NotContains(t, h.topics(), runfiles.TopicTaskPRConflicted)
}

// A pull request whose merge conflicts again on the new base goes back to
// its task's loop, on its branch brought up to that base, as a conflicting
// merge does; the work it then delivers updates the same pull request.
func TestPRThatConflictsWithItsNewBaseGoesBackToItsLoop(t *testing.T) {
	h := newPRHarness(t, "6")
	h.start(t.Context(), h.prSettings("merged"))
	h.loop().complete()
	first := payloadOf(h.next(runfiles.TopicTaskPROpened))

	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, t.TempDir(), "clone", "-q", h.remote, other)
	gittest.Run(t, other, "config", "user.name", "P")
	gittest.Run(t, other, "config", "user.email", "p@example.com")
	gittest.CommitFile(t, other, "6.txt", "theirs\n", "their 6.txt")
	gittest.Run(t, other, "push", "-q", "origin", "HEAD:"+h.base)
	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.Conflicts, pr.HeadSHA = true, first.Commit })

	h.next(runfiles.TopicTaskPRConflicted)
	failed := payloadOf(h.next(runfiles.TopicMergeFailed))
	assert.Equal(t, []string{"6.txt"}, failed.Files)
	retry := payloadOf(h.next(runfiles.TopicTaskRetry))
	assert.Equal(t, 2, retry.Attempt)
	// The retry's loop resolves the conflict its way and commits.
	again := h.loop()
	assert.Equal(t, 2, again.job.Attempt)
	again.complete()
	updated := payloadOf(h.next(runfiles.TopicTaskPROpened))
	assert.Equal(t, 1, updated.Number)
	assert.Equal(t, updated.Commit, gittest.Run(t, h.remote, "rev-parse", "ralph/6"))
	assert.Equal(t, "6\n", gittest.Run(t, h.remote, "show", "ralph/6:6.txt")+"\n")
	assert.Len(t, h.calls("open pr"), 1, "one pull request")
	h.forge.SetPR(1, func(pr *forge.PullRequest) { pr.Conflicts = false })
	h.merge(1)
	h.next(runfiles.TopicTaskCompleted)
	assert.Equal(t, Result{Completed: 1}, h.wait())
}

// Somebody's push to the task's branch on the remote between its merge and
// ralph's push is not replaced: the task fails, saying so.
func TestPRDoesNotReplaceAPushToTheTasksBranch(t *testing.T) {
	h := newPRHarness(t, "8")
	other := filepath.Join(t.TempDir(), "other")
	gittest.Run(t, t.TempDir(), "clone", "-q", h.remote, other)
	s := h.prSettings("merged")
	s.Verify = verifySpecs(t, "cd "+other+" && git -c user.name=P -c user.email=p@example.com commit -q --allow-empty -m theirs && "+
		"git push -q origin HEAD:refs/heads/ralph/8")
	h.start(t.Context(), s)
	h.loop().complete()
	failed := payloadOf(h.next(runfiles.TopicTaskFailed))
	assert.Contains(t, failed.Reason, "somebody pushed to ralph/8 on origin since its merge was made, and ralph does not replace their work")
	assert.Equal(t, exitcode.Failure, h.wait().ExitCode)
	assert.Equal(t, gittest.Run(t, other, "rev-parse", "HEAD"), gittest.Run(t, h.remote, "rev-parse", "ralph/8"), "their push stays")
	assert.Empty(t, h.calls("open pr"))
}

func TestPRBodyTellsTheTaskTheLoopAndTheVerification(t *testing.T) {
	task := tasks.Task{ID: "12", Title: "Add a flag", Description: "Add --json to status.",
		Criteria: []tasks.Criterion{{Text: "the help mentions it"}}}
	last := events.Event{Topic: "LOOP_COMPLETE", Payload: events.StringPayload("Added --json.\nTests pass."), Source: events.SourceTag}
	report := runfiles.LoopReport{Last: &last,
		End: &runfiles.TerminateRecord{Reason: runfiles.ReasonCompleted, Message: "the completion topic LOOP_COMPLETE was accepted",
			Iterations: 3, Tokens: 16200, CostUSD: 0.21, CostSource: runfiles.CostReported, RuntimeMS: 90_000},
		Commits: []runfiles.CommitRecord{{Hash: "0123456789abcdef", Subject: "add --json"}}}
	m := runfiles.TaskMerge{Base: strings.Repeat("b", 40), Verified: []string{"tests_pass", "lint_clean"}}
	body := prBody(task, "github", report, m, "main", true)
	for _, want := range []string{
		"ralph autopilot did task `12` from github and delivers it here, merged onto `main` and verified.",
		"## Add a flag\n\nAdd --json to status.\n\n### Acceptance criteria\n\n- the help mentions it\n",
		"Its agent's last word (`LOOP_COMPLETE`):\n\n> Added --json.\n> Tests pass.\n",
		"- ended: completed (exit 0): the completion topic LOOP_COMPLETE was accepted\n",
		"- iterations: 3 · tokens: 16200 · cost: $0.2100 · runtime: 1m30s\n",
		"  - 0123456789ab add --json\n",
		"The merge onto `main` at bbbbbbbbbbbb passed: tests_pass, lint_clean.",
	} {
		assert.Contains(t, body, want)
	}
	assert.Equal(t, "Add a flag (#12)", prTitle(task, true))
	assert.Equal(t, "Add a flag (12)", prTitle(task, false))
}

package autopilot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/runfiles"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/tasks"
)

// What the user's checkout may hold when the autopilot starts, and what
// becomes of it.

func TestCheckCleanRefusesOnlyChangesToTrackedFiles(t *testing.T) {
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	gittest.CommitFile(t, repo, "tracker.txt", "", "tracker")
	source := newMemSource(repo)
	gittest.WriteFile(t, repo, "notes.txt", "mine\n")
	gittest.WriteFile(t, repo, "tracker.txt", "claim a\n")
	check := func(source tasks.Source) error {
		var failed preconditions
		require.NoError(t, checkClean(t.Context(), git.Repo{Dir: repo}, source, nil, &failed))
		return failed.err()
	}
	require.NoError(t, check(source), "untracked files and the tracker's own do not count")

	gittest.WriteFile(t, repo, "README.md", "hi\nmy edit\n")
	gittest.WriteFile(t, repo, "staged.txt", "x\n")
	gittest.Run(t, repo, "add", "staged.txt")
	var pre *PreconditionError
	require.ErrorAs(t, check(source), &pre)
	assert.Equal(t, "the base branch has uncommitted changes: README.md, staged.txt", pre.Error())
	assert.Contains(t, pre.Hint(), "untracked files may stay")
	assert.NotContains(t, pre.Hint(), "autopilot.source.files")

	command, err := tasks.Open(tasks.Spec{Type: "command", List: "true", Close: "true"}, repo)
	require.NoError(t, err)
	require.ErrorAs(t, check(command), &pre)
	assert.Contains(t, pre.Hint(), "list them in autopilot.source.files", "a command source is told where its files go")
}

// Every precondition that fails is named at once, each with its fix, so
// that one try tells the user all there is to do.
func TestPreflightNamesEveryFailedPrecondition(t *testing.T) {
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hi\n", "start")
	gittest.WriteFile(t, repo, "README.md", "hi\nmy edit\n")
	gittest.Run(t, repo, "checkout", "-q", "--detach")
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := t.TempDir() // git, and no tk
	require.NoError(t, os.Symlink(gitBin, filepath.Join(bin, "git")))
	t.Setenv("PATH", bin)
	source, err := tasks.Open(tasks.Spec{Type: "tk"}, repo)
	require.NoError(t, err)
	_, _, err = Preflight(t.Context(), repo, "", source, nil)
	var all PreconditionsError
	require.ErrorAs(t, err, &all)
	assert.Equal(t, "the autopilot cannot start, for 3 reasons:\n"+
		"1. HEAD is detached: the autopilot merges onto the branch checked out here\n"+
		"2. the base branch has uncommitted changes: README.md\n"+
		"3. tk is not on PATH: the tk source runs it", err.Error())
	hints := strings.Split(hint.Of(err), "\n")
	require.Len(t, hints, 3)
	assert.Equal(t, "1. check out the branch to merge into, e.g. git switch main", hints[0])
	assert.True(t, strings.HasPrefix(hints[1], "2. commit or stash them first"), hints[1])
	assert.True(t, strings.HasPrefix(hints[2], "3. install tk, or choose another autopilot.source"), hints[2])
	var one *PreconditionError
	assert.ErrorAs(t, err, &one, "each problem is still a *PreconditionError")
	assert.True(t, hint.Has(err, hint.Invalid))

	// Outside a repository, the tool is named beside it.
	_, _, err = Preflight(t.Context(), t.TempDir(), "", source, nil)
	require.ErrorAs(t, err, &all)
	assert.Len(t, all, 2)
	assert.Contains(t, err.Error(), "is not in a git repository")
	assert.Contains(t, err.Error(), "2. tk is not on PATH")

	// The autopilot's own config, uncommitted, is no problem: every task's
	// loop reads it from this checkout.
	gittest.CommitFile(t, repo, "ralph.yml", "old\n", "config")
	gittest.WriteFile(t, repo, "ralph.yml", "new\n")
	_, _, err = Preflight(t.Context(), repo, "", source, []string{filepath.Join(repo, "ralph.yml")})
	require.ErrorAs(t, err, &all)
	assert.NotContains(t, err.Error(), "ralph.yml")
	assert.Contains(t, err.Error(), "uncommitted changes: README.md")
	_, _, err = Preflight(t.Context(), repo, "", source, nil)
	assert.Contains(t, err.Error(), "uncommitted changes: README.md, ralph.yml", "another's config is the user's change")

	// One problem is said as it is, unnumbered.
	gittest.Run(t, repo, "checkout", "-q", "-f", "@{-1}")
	_, _, err = Preflight(t.Context(), repo, "", source, nil)
	require.ErrorAs(t, err, &one)
	assert.Equal(t, "tk is not on PATH: the tk source runs it", err.Error())
}

// A file in the way of a verified merge's fast-forward is the checkout's
// fault, not the task's: the run ends naming it, the merge waits in the
// queue, and the next run lands it once the file is out of the way.
func TestAFileInTheWayOfALandWaitsForTheNextRun(t *testing.T) {
	for _, kind := range []string{"untracked", "modified"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, task("a", 1), task("b", 2))
			if kind == "modified" {
				// The task's loop writes a.txt: a tracked one with local
				// changes is as much in the way as an untracked one.
				gittest.CommitFile(t, h.repo, "a.txt", "old\n", "a.txt")
			}
			gittest.WriteFile(t, h.repo, "a.txt", "mine\n")
			h.start(t.Context(), h.settings(1))
			h.loop().complete()
			b := h.loop() // a's slot is free once its loop has finished
			notice := payloadOf(h.next(runfiles.TopicAutopilotNotice))
			assert.Contains(t, notice.Message, "a.txt")
			assert.Contains(t, notice.Message, "the run ends once the running loops have finished")
			b.complete()
			res := h.wait()
			assert.Equal(t, Result{ExitCode: exitcode.Fatal, Resumable: true}, res)
			var blocked *LandBlockedError
			require.ErrorAs(t, h.err, &blocked)
			assert.Equal(t, "a", blocked.Task)
			assert.Equal(t, []string{"a.txt"}, blocked.Err.Files())
			assert.Contains(t, blocked.Error(), "the merge of a is verified, but")
			if kind == "untracked" {
				assert.Contains(t, blocked.Error(), "a.txt, untracked in this checkout, would be overwritten")
				assert.Contains(t, blocked.Hint(), "move a.txt out of the way")
			} else {
				assert.Contains(t, blocked.Error(), "the uncommitted changes to a.txt")
				assert.Contains(t, blocked.Hint(), "commit or stash your changes to a.txt")
			}
			assert.Equal(t, "mine\n", readFile(t, h.repo, "a.txt"), "the user's file is as it was")
			assert.Zero(t, h.source.closed["a"], "not closed")
			assert.Empty(t, h.source.failed, "not failed: the task did nothing wrong")
			st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
			require.NoError(t, err)
			require.Len(t, st.MergeQueue, 2, "b's loop finished, and waits to merge")
			assert.Equal(t, "a", st.MergeQueue[0].Task)
			assert.Equal(t, runfiles.MergeDone, st.MergeQueue[0].Step, "the verified merge waits to land")

			require.NoError(t, os.Remove(filepath.Join(h.repo, "a.txt")))
			if kind == "modified" {
				gittest.Run(t, h.repo, "checkout", "--", "a.txt")
			}
			again := &harness{t: t, repo: h.repo, source: h.source, runner: h.runner,
				events: make(chan events.Event, 1000), done: make(chan struct{})}
			again.start(t.Context(), h.settings(1))
			assert.Equal(t, "a", payloadOf(again.next(runfiles.TopicTaskCompleted)).Task, "landed first")
			assert.Equal(t, "b", payloadOf(again.next(runfiles.TopicTaskCompleted)).Task)
			res = again.wait()
			require.NoError(t, again.err)
			assert.Equal(t, 2, res.Completed)
			assert.Equal(t, "a\n", readFile(t, h.repo, "a.txt"))
			assert.Equal(t, 1, h.source.closed["a"])
			assert.Equal(t, 1, strings.Count(gittest.Run(t, h.repo, "log", "--format=%s"), "ralph: merge a "))
		})
	}
}

// unnamedSource is a tracker that cannot name its files, as a command
// source without files: is; its claim also writes board/<id>.
type unnamedSource struct{ *memSource }

func (s unnamedSource) Files() []string { return nil }

func (s unnamedSource) Claim(ctx context.Context, id string) error {
	if err := os.MkdirAll(filepath.Join(s.dir, "board"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "board", id), []byte("claimed\n"), 0o644); err != nil {
		return err
	}
	return s.memSource.Claim(ctx, id)
}

// The autopilot commits what the claim, close and fail of a tracker that
// cannot name its files changed, each with its message, and nothing else
// of the checkout.
func TestTheChangesOfATrackerWithoutFilesAreCommitted(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	gittest.CommitFile(t, h.repo, "tracker.txt", "", "tracker")
	gittest.WriteFile(t, h.repo, "notes.txt", "mine\n")
	go func() {
		defer close(h.done)
		h.res, h.err = Run(t.Context(), Options{Repo: h.repo, Settings: h.settings(1), Source: unnamedSource{h.source}, Runner: h.runner,
			OnEvent: func(ev events.Event, _ *runfiles.AutopilotState) { h.events <- ev }})
	}()
	h.loop().complete()
	h.next(runfiles.TopicTaskCompleted)
	h.loop().finish(LoopResult{ExitCode: exitcode.Failure, Reason: "stuck"})
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{ExitCode: exitcode.Failure, Completed: 1, Failed: 1}, res)
	assert.Equal(t, "?? notes.txt", gittest.Run(t, h.repo, "status", "--porcelain"), "the tracker's changes are committed, the user's file left alone")
	changedBy := func(subject string) string {
		hash := gittest.Run(t, h.repo, "log", "--format=%H", "--fixed-strings", "--grep", subject)
		require.Len(t, strings.Fields(hash), 1, "one commit %q", subject)
		return gittest.Run(t, h.repo, "show", "--name-only", "--format=", hash)
	}
	assert.Equal(t, "board/a\ntracker.txt", changedBy("ralph: claim a"))
	assert.Equal(t, "tracker.txt", changedBy("ralph: close a"))
	assert.Equal(t, "board/b\ntracker.txt", changedBy("ralph: claim b"))
	assert.Equal(t, "tracker.txt", changedBy("ralph: b failed"))
	assert.Equal(t, "claim a\nclaim b\nclose a\nfail b\n", readFile(t, h.repo, "tracker.txt"), "b starts as soon as a has finished")
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
)

// A task starts at its base; a second worker, after the first pushed work
// in progress and died, continues from that work.
func TestCheckoutsPrepareContinuesFromWorkInProgress(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	first := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	co, err := first.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	clone := first.repo(url).Dir
	assert.Equal(t, Checkout{Dir: filepath.Join(first.Dir, "tasks", "t-1"), Start: base,
		Pin: git.Pin{GitDir: filepath.Join(clone, "worktrees", "t-1"), CommonDir: clone}}, co)
	assert.Equal(t, "ralph/t-1", gittest.Run(t, co.Dir, "branch", "--show-current"))

	wip := gittest.CommitFile(t, co.Dir, "a.txt", "iteration 1\n", "iteration 1")
	require.NoError(t, PushProgress(ctx, co, url, "t-1"))

	second := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	co2, err := second.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	assert.True(t, co2.Continued)
	assert.Equal(t, wip, co2.Start)
	assert.Equal(t, wip, gittest.Run(t, co2.Dir, "rev-parse", "HEAD"))

	// The first worker, restarted, takes the task back: its own leftover
	// worktree gives way to what was pushed since.
	later := gittest.CommitFile(t, co2.Dir, "b.txt", "iteration 2\n", "iteration 2")
	require.NoError(t, PushProgress(ctx, co2, url, "t-1"))
	gittest.WriteFile(t, co.Dir, "unpushed.txt", "lost\n")
	co3, err := first.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	assert.Equal(t, later, gittest.Run(t, co3.Dir, "rev-parse", "HEAD"))
	assert.NoFileExists(t, filepath.Join(co3.Dir, "unpushed.txt"))

	head, err := PushResult(ctx, co3, url, "t-1")
	require.NoError(t, err)
	assert.Equal(t, later, head)
	assert.Equal(t, later, gittest.Run(t, t.TempDir(), "ls-remote", url, "refs/heads/ralph/t-1")[:40])
}

// The agent of a task rewrites its worktree's .git file to name a
// repository of its own, whose config has git run a script: the worker's
// git there (its pushes, its commit of what is left) goes to the clone it
// made, and never runs the script.
func TestCheckoutsGitIgnoresARewrittenDotGit(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	c := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	co, err := c.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	wip := gittest.CommitFile(t, co.Dir, "a.txt", "work\n", "work")
	armed := gittest.NewRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "fsmonitor.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))
	gittest.Run(t, armed, "config", "core.fsmonitor", script)
	gittest.WriteFile(t, co.Dir, ".git", "gitdir: "+filepath.Join(armed, ".git")+"\n")

	require.NoError(t, PushProgress(ctx, co, url, "t-1"))
	changed, err := co.Repo().Changed(ctx)
	require.NoError(t, err)
	assert.Empty(t, changed, "git never counts a .git as the work tree's")
	head, err := PushResult(ctx, co, url, "t-1")
	require.NoError(t, err)
	assert.Equal(t, wip, head)
	assert.NoFileExists(t, marker, "the worker's git ran the script the agent armed")
}

func TestCheckoutsRefuse(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	c := Checkouts{Dir: t.TempDir(), Allow: []string{"https://example.com/other.git"}}
	_, err := c.Prepare(ctx, "t-1", url, base)
	require.ErrorIs(t, err, ErrNotAllowed)
	assert.Contains(t, err.Error(), url)
	assert.Contains(t, err.Error(), "--allow-remote")

	c.Allow = []string{url}
	_, err = c.Prepare(ctx, "../escape", url, base)
	require.Error(t, err, "a task id that is no valid id is refused before any path is made of it")
	_, err = c.Prepare(ctx, "t-2", url, "0123456789012345678901234567890123456789")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not have")
}

// Slots that prepare tasks of one repository at the same moment, the first
// on a machine that has no clone of it yet, each get their worktree: none
// fetches into a clone another is still making.
func TestCheckoutsPrepareTasksOfOneRepositoryAtOnce(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	c := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := c.Prepare(ctx, fmt.Sprintf("t-%d", i), url, base)
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	clones, err := filepath.Glob(filepath.Join(c.Dir, "repos", "*.git"))
	require.NoError(t, err)
	assert.Len(t, clones, 1, "one clone: %v", clones)
	leftovers, err := filepath.Glob(filepath.Join(c.Dir, "repos", ".clone-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers)
}

// A worker's next task reuses the worktree of one that ended: moved to
// the task's place, on its branch at its start, with nothing of the
// earlier loop left (its files, ignored ones too, and a merge it left
// under way); a task that comes back to the same worker reuses its own
// worktree in place. The clone keeps one worktree throughout.
func TestCheckoutsPrepareFromReusesASpare(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	c := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	first, err := c.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	gittest.CommitFile(t, first.Dir, ".gitignore", "build/\n", "ignore the build")
	gittest.WriteFile(t, first.Dir, "build/out", "built\n")
	gittest.WriteFile(t, first.Dir, "notes.txt", "left\n")
	require.NoError(t, os.WriteFile(filepath.Join(first.Pin.GitDir, "MERGE_HEAD"), []byte(base+"\n"), 0o644))
	_, err = PushResult(ctx, first, url, "t-1")
	require.NoError(t, err)

	second, err := c.PrepareFrom(ctx, first, "t-2", url, base)
	require.NoError(t, err)
	assert.Equal(t, Checkout{Dir: filepath.Join(c.Dir, "tasks", "t-2"), Start: base, Pin: first.Pin}, second)
	assert.NoDirExists(t, first.Dir)
	assert.Equal(t, "ralph/t-2", gittest.Run(t, second.Dir, "branch", "--show-current"))
	assert.Equal(t, base, gittest.Run(t, second.Dir, "rev-parse", "HEAD"))
	assert.Empty(t, gittest.Run(t, second.Dir, "status", "--porcelain", "--ignored"))
	assert.NoFileExists(t, filepath.Join(second.Pin.GitDir, "MERGE_HEAD"))
	assert.Contains(t, gittest.Run(t, second.Dir, "worktree", "list"), second.Dir)

	// Its work in progress pushed, t-2 comes back: its own worktree is
	// reset in place to that work.
	wip := gittest.CommitFile(t, second.Dir, "a.txt", "iteration 1\n", "iteration 1")
	require.NoError(t, PushProgress(ctx, second, url, "t-2"))
	gittest.WriteFile(t, second.Dir, "unpushed.txt", "lost\n")
	again, err := c.PrepareFrom(ctx, second, "t-2", url, base)
	require.NoError(t, err)
	assert.Equal(t, Checkout{Dir: second.Dir, Start: wip, Continued: true, Pin: first.Pin}, again)
	assert.Equal(t, wip, gittest.Run(t, again.Dir, "rev-parse", "HEAD"))
	assert.NoFileExists(t, filepath.Join(again.Dir, "unpushed.txt"))

	worktrees, err := os.ReadDir(filepath.Join(c.repo(url).Dir, "worktrees"))
	require.NoError(t, err)
	assert.Len(t, worktrees, 1, "one worktree, reused")
}

// A spare that is not a worktree any more (removed by hand, say) is
// dropped, and the task gets a new worktree.
func TestCheckoutsPrepareFromDropsABrokenSpare(t *testing.T) {
	ctx := t.Context()
	url, base := gittest.SharedRemote(t)
	c := Checkouts{Dir: t.TempDir(), Allow: []string{url}}
	first, err := c.Prepare(ctx, "t-1", url, base)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(first.Dir))

	second, err := c.PrepareFrom(ctx, first, "t-2", url, base)
	require.NoError(t, err)
	assert.Equal(t, base, gittest.Run(t, second.Dir, "rev-parse", "HEAD"))
	assert.Equal(t, "ralph/t-2", gittest.Run(t, second.Dir, "branch", "--show-current"))
	assert.NotEqual(t, first.Pin, second.Pin)
}

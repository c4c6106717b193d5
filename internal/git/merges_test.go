package git

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// Only ralph's own commits on the first-parent line, whose subject and
// trailer name the same task, say a task is merged: not an agent's commit
// that copied the trailer, merged as a second parent or replayed onto the
// line with its own subject.
func TestMergedTasksCountsOnlyRalphsOwnCommits(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	base := gittest.CommitFile(t, dir, "README", "a project\n", "start")
	gittest.Run(t, dir, "checkout", "-q", "-b", "ralph/a")
	gittest.CommitFile(t, dir, "a.txt", "a\n", WithTaskTrailer("do a", "b"))
	gittest.Run(t, dir, "checkout", "-q", "-")
	gittest.Run(t, dir, "merge", "-q", "--no-ff", "-m", WithTaskTrailer(MergeSubject("a", "A"), "a"), "ralph/a")
	merge := gittest.Run(t, dir, "rev-parse", "HEAD")
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", WithTaskTrailer("replayed work", "c"))
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", WithTaskTrailer(MergeSubject("d", "D"), "e"))

	g := Repo{Dir: dir}
	merged, err := g.MergedTasks(ctx, "", "HEAD")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": merge}, merged)
	since, err := g.MergedTasks(ctx, merge, "HEAD")
	require.NoError(t, err)
	assert.Empty(t, since)
	all, err := g.MergedTasks(ctx, base, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, merged, all)
}

// The conflict markers a change adds are found at their lines; markers the
// base already had, and whitespace errors, are not.
func TestConflictMarkers(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	base := gittest.CommitFile(t, dir, "old.txt", "<<<<<<< kept on purpose\n", "a marker of old")
	gittest.WriteFile(t, dir, "trailing.txt", "space at the end \n")
	gittest.Run(t, dir, "add", "trailing.txt")
	head := gittest.CommitFile(t, dir, "f.txt", "one\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n", "a conflict committed")
	g := Repo{Dir: dir}
	markers, err := g.ConflictMarkers(ctx, base, head)
	require.NoError(t, err)
	assert.Equal(t, []string{"f.txt:2", "f.txt:4", "f.txt:6"}, markers)
	none, err := g.ConflictMarkers(ctx, base, base)
	require.NoError(t, err)
	assert.Empty(t, none)

	gittest.WriteFile(t, dir, "f.txt", "one\n>>>>>>> left over\n")
	unresolved, err := g.UnresolvedChanges(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"f.txt:2"}, unresolved, "the work tree's new marker, not the committed ones")
}

// A fast-forward cut off after git wrote some of the work tree is told
// from a checkout with the user's own changes in it.
func TestHalfForwarded(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	base := gittest.CommitFile(t, dir, "a.txt", "a\n", "a")
	gittest.Run(t, dir, "checkout", "-q", "-b", "merged")
	gittest.WriteFile(t, dir, "a.txt", "a, merged\n")
	gittest.Run(t, dir, "add", "a.txt")
	commit := gittest.CommitFile(t, dir, "new.txt", "new\n", "the merge")
	gittest.Run(t, dir, "checkout", "-q", "-")
	g := Repo{Dir: dir}

	half, err := g.HalfForwarded(ctx, base, commit)
	require.NoError(t, err)
	assert.False(t, half, "nothing written: no fast-forward begun")

	gittest.WriteFile(t, dir, "new.txt", "new\n")
	gittest.WriteFile(t, dir, "notes.txt", "the user's\n")
	half, err = g.HalfForwarded(ctx, base, commit)
	require.NoError(t, err)
	assert.True(t, half, "new.txt as the merge has it; notes.txt untracked and in no one's way")

	gittest.WriteFile(t, dir, "a.txt", "the user's edit\n")
	half, err = g.HalfForwarded(ctx, base, commit)
	require.NoError(t, err)
	assert.False(t, half, "a.txt is neither the base's nor the merge's")

	gittest.WriteFile(t, dir, "a.txt", "a, merged\n")
	half, err = g.HalfForwarded(ctx, base, commit)
	require.NoError(t, err)
	require.True(t, half)
	require.NoError(t, g.ResetHard(ctx, commit))
	notes, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "the user's\n", string(notes), "finishing the fast-forward keeps the user's untracked file")
}

// The autopilot adds and removes worktrees of one repository from two
// goroutines; git's worktree commands there never overlap.
func TestWorktreeCommandsOfOneRepositoryTakeTurns(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	head := gittest.CommitFile(t, dir, "README", "a project\n", "start")
	g := Repo{Dir: dir}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			path := filepath.Join(dir, ".worktrees", fmt.Sprintf("t-%d", i))
			for range 3 {
				if err := g.AddDetachedWorktree(ctx, path, head); err != nil {
					errs <- err
					return
				}
				if err := g.RemoveWorktree(ctx, path); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

// An index.lock nothing holds open is stale; one a git process (here a
// shell) has open is not.
func TestStaleIndexLock(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "README", "a project\n", "start")
	g := Repo{Dir: dir}
	assert.Empty(t, g.StaleIndexLock(ctx), "none there")

	lock := filepath.Join(dir, ".git", "index.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	if runtime.GOOS != "linux" {
		assert.Empty(t, g.StaleIndexLock(ctx), "without /proc nothing is stale")
		return
	}
	assert.Equal(t, lock, g.StaleIndexLock(ctx))

	holder := exec.Command("sh", "-c", `exec 3<"$1"; echo open; exec sleep 60`, "sh", lock)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	_, err = bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	assert.Empty(t, g.StaleIndexLock(ctx), "a process has it open")

	assert.Empty(t, Repo{Dir: t.TempDir()}.StaleIndexLock(ctx), "not a repository")
}

// A commit in a linked worktree locks the worktree's index and HEAD and
// its branch's ref in the repository's common directory; a detached HEAD
// moves no branch.
func TestCommitLocks(t *testing.T) {
	ctx := context.Background()
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README", "a project\n", "start")
	ws := filepath.Join(t.TempDir(), "slot")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/t1", ws)
	common, err := filepath.EvalSymlinks(filepath.Join(main, ".git"))
	require.NoError(t, err)
	got := Repo{Dir: ws}.CommitLocks(ctx)
	for i, p := range got {
		got[i] = strings.Replace(p, filepath.Join(main, ".git"), common, 1)
	}
	assert.Equal(t, []string{
		filepath.Join(common, "worktrees", "slot", "index.lock"),
		filepath.Join(common, "worktrees", "slot", "HEAD.lock"),
		filepath.Join(common, "refs", "heads", "ralph", "t1.lock"),
	}, got)

	gittest.Run(t, ws, "checkout", "-q", "--detach")
	assert.Len(t, Repo{Dir: ws}.CommitLocks(ctx), 2, "a detached HEAD locks no branch")
	assert.Empty(t, Repo{Dir: t.TempDir()}.CommitLocks(ctx), "not a repository")

	unborn := gittest.NewRepo(t)
	gittest.Run(t, unborn, "checkout", "-q", "-b", "first")
	locks := Repo{Dir: unborn}.CommitLocks(ctx)
	require.Len(t, locks, 3, "a branch with no commit yet is locked by its first")
	assert.Equal(t, filepath.Join("refs", "heads", "first.lock"), filepath.Join(filepath.Base(filepath.Dir(filepath.Dir(locks[2]))),
		filepath.Base(filepath.Dir(locks[2])), filepath.Base(locks[2])))
}

// Every loop asks for its commit locks as it starts: one git process.
func TestCommitLocksRunsOneGit(t *testing.T) {
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README", "a project\n", "start")
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	require.Len(t, Repo{Dir: repo}.CommitLocks(t.Context()), 3)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "trace: built-in: git"), "git ran:\n%s", data)
}

// In a pinned worktree (an autopilot's slot) the commit locks, the index
// lock and the index to seed from are where git says, read with no git
// process; a tampered pin is left to git, which refuses it.
func TestPinnedWorktreePathsAsGitSaysWithoutGit(t *testing.T) {
	ctx := context.Background()
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "README", "a project\n", "start")
	ws := filepath.Join(t.TempDir(), "slot")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "ralph/t1", ws)
	pin, err := Repo{Dir: main}.WorktreePin(ctx, ws)
	require.NoError(t, err)
	pinned, plain := Repo{Dir: ws, Pin: pin}, Repo{Dir: ws}
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)

	same := func(want, got []string) {
		t.Helper()
		require.Len(t, got, len(want))
		for i := range want {
			assert.True(t, sameFile(want[i], got[i]) || want[i] == got[i], "%s, not %s", want[i], got[i])
		}
	}
	for _, detach := range []bool{false, true} {
		if detach {
			gittest.Run(t, ws, "checkout", "-q", "--detach")
		}
		if err := os.Remove(trace); err != nil {
			require.ErrorIs(t, err, os.ErrNotExist)
		}
		locks := pinned.CommitLocks(ctx)
		lock := pinned.IndexLockPath(ctx)
		index := filepath.Join(t.TempDir(), "tree.index")
		_, err := pinned.WorkTree(ctx, index)
		require.NoError(t, err)
		data, _ := os.ReadFile(trace) // none when no git ran at all
		assert.NotContains(t, string(data), "rev-parse", "no git asked where its files are")
		want := plain.CommitLocks(ctx)
		if detach {
			assert.Len(t, locks, 2, "a detached HEAD locks no branch")
		}
		// Paths git names for files that are not there yet compare by
		// their directory.
		for i := range want {
			want[i] = filepath.Join(resolved(t, filepath.Dir(want[i])), filepath.Base(want[i]))
			locks[i] = filepath.Join(resolved(t, filepath.Dir(locks[i])), filepath.Base(locks[i]))
		}
		same(want, locks)
		assert.Equal(t, filepath.Join(resolved(t, filepath.Dir(plain.IndexLockPath(ctx))), "index.lock"),
			filepath.Join(resolved(t, filepath.Dir(lock)), "index.lock"))
	}

	require.NoError(t, os.WriteFile(filepath.Join(pin.GitDir, "commondir"), []byte(t.TempDir()+"\n"), 0o644))
	assert.Empty(t, pinned.CommitLocks(ctx), "git refuses a tampered pin")
	assert.Empty(t, pinned.IndexLockPath(ctx))
}

func resolved(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return r
}

// A merge of trees makes the commit a merge in a checkout would, with no
// checkout touched; a conflict is no error but a merge left undone, for a
// checkout to make. The commit's trailer names its task as MergedTasks
// reads it.
func TestMergeTreesAndCommitTree(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "README", "a project\n", "start")
	home := gittest.Run(t, dir, "branch", "--show-current")
	gittest.Run(t, dir, "branch", "task")
	gittest.Run(t, dir, "branch", "clash")
	base := gittest.CommitFile(t, dir, "TODO.md", "- [x] a\n", "close a")
	gittest.Run(t, dir, "checkout", "-q", "task")
	gittest.CommitFile(t, dir, "a.txt", "a\n", "do a")
	gittest.Run(t, dir, "checkout", "-q", "clash")
	gittest.CommitFile(t, dir, "TODO.md", "- [ ] a, changed\n", "touch the tracker")
	gittest.Run(t, dir, "checkout", "-q", home)
	g := Repo{Dir: dir}

	tree, ok, err := g.MergeTrees(ctx, base, "task")
	require.NoError(t, err)
	require.True(t, ok)
	same, err := g.SameAt(ctx, base, tree, "TODO.md")
	require.NoError(t, err)
	assert.True(t, same, "the task's branch left the tracker alone")
	commit, err := g.CommitTree(ctx, tree, WithTaskTrailer(MergeSubject("a", "A"), "a"), base, "task")
	require.NoError(t, err)
	assert.Equal(t, base+" "+gittest.Run(t, dir, "rev-parse", "task"), gittest.Run(t, dir, "log", "-1", "--format=%P", commit))
	assert.Equal(t, "a\n", gittest.Run(t, dir, "show", commit+":a.txt")+"\n")
	merged, err := g.MergedTasks(ctx, "", commit)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": commit}, merged)
	assert.Equal(t, base, gittest.Run(t, dir, "rev-parse", "HEAD"), "no branch moved")

	_, ok, err = g.MergeTrees(ctx, base, "clash")
	require.NoError(t, err)
	assert.False(t, ok, "both changed TODO.md")
	same, err = g.SameAt(ctx, base, "clash", "TODO.md")
	require.NoError(t, err)
	assert.False(t, same)
}

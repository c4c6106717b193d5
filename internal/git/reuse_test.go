package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// A worktree that is done with, reset, moved and given a new branch is
// what `git worktree add` would have made there: git and the worktree
// know where each other is, nothing of its last use is left, and its
// branch, index and files are the start commit's.
func TestAResetWorktreeMovedServesAsANewOne(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, ".gitignore", "/build/\n", "ignore")
	first := gittest.CommitFile(t, dir, "a.txt", "a\n", "first")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	old, spare, next := filepath.Join(dir, "wt", "old"), filepath.Join(dir, "wt", "spare"), filepath.Join(dir, "wt", "next")
	require.NoError(t, repo.AddWorktree(ctx, old, "ralph/old", "HEAD"))
	pin, err := repo.WorktreePin(ctx, old)
	require.NoError(t, err)
	gittest.CommitFile(t, old, "old.txt", "old\n", "old's work")
	gittest.WriteFile(t, old, "a.txt", "changed\n")
	gittest.WriteFile(t, old, "junk.txt", "x\n")
	gittest.WriteFile(t, old, "build/out", "x\n")
	require.NoError(t, os.WriteFile(filepath.Join(pin.GitDir, "MERGE_HEAD"), []byte(first+"\n"), 0o644))
	// The base branch moves on meanwhile.
	second := gittest.CommitFile(t, dir, "b.txt", "b\n", "second")
	base := "refs/heads/" + gittest.Run(t, dir, "branch", "--show-current")

	require.NoError(t, repo.ResetWorktree(ctx, pin, old, base))
	require.NoError(t, repo.DeleteBranch(ctx, "ralph/old"), "the branch is free")
	require.NoError(t, repo.MoveWorktree(pin, old, spare))
	require.NoError(t, repo.MoveWorktree(pin, spare, next))
	require.NoError(t, repo.CheckoutBranch(ctx, pin, next, "ralph/next", base))

	assert.NoDirExists(t, old)
	again, err := repo.WorktreePin(ctx, next)
	require.NoError(t, err)
	assert.Equal(t, pin, again, "git's entry names the worktree where it is")
	assert.Contains(t, gittest.Run(t, dir, "worktree", "list", "--porcelain"), "worktree "+next)
	entries, err := os.ReadDir(next)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{".git", ".gitignore", "a.txt", "b.txt"}, names, "nothing of old's, untracked or ignored")
	assert.Equal(t, "a", gittest.Run(t, next, "show", ":a.txt"))
	assert.Empty(t, gittest.Run(t, next, "status", "--porcelain"))
	assert.Equal(t, "ralph/next", gittest.Run(t, next, "branch", "--show-current"))
	assert.Equal(t, second, gittest.Run(t, next, "rev-parse", "HEAD"))
	assert.NoFileExists(t, filepath.Join(pin.GitDir, "MERGE_HEAD"), "no merge under way")
}

// A reset runs no checkout where the worktree's branch can be read from
// the repository's files: it is detached where it is, and the next
// task's checkout makes its files that start's, whatever the last task
// left in them. A branch that exists already is checked out the same.
func TestAResetDetachesInPlaceAndTheNextCheckoutTakesOver(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "a.txt", "a\n", "first")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	base := "refs/heads/" + gittest.Run(t, dir, "branch", "--show-current")
	wt := filepath.Join(dir, "wt")
	require.NoError(t, repo.AddWorktree(ctx, wt, "ralph/old", base))
	pin, err := repo.WorktreePin(ctx, wt)
	require.NoError(t, err)
	done := gittest.CommitFile(t, wt, "old.txt", "old\n", "old's work")
	gittest.WriteFile(t, wt, "a.txt", "left changed\n")
	gittest.Run(t, dir, "branch", "ralph/again", base)

	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	require.NoError(t, repo.ResetWorktree(ctx, pin, wt, base))
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "built-in: git checkout", "no checkout:\n%s", data)
	t.Setenv("GIT_TRACE", "")
	assert.Equal(t, done, gittest.Run(t, wt, "rev-parse", "HEAD"), "detached where its branch was")
	assert.Empty(t, gittest.Run(t, wt, "branch", "--show-current"))
	require.NoError(t, repo.DeleteBranch(ctx, "ralph/old"), "the branch is free")

	for _, branch := range []string{"ralph/new", "ralph/again"} {
		gittest.WriteFile(t, wt, "a.txt", "left changed\n")
		require.NoError(t, repo.CheckoutBranch(ctx, pin, wt, branch, base))
		assert.Equal(t, branch, gittest.Run(t, wt, "branch", "--show-current"))
		assert.Empty(t, gittest.Run(t, wt, "status", "--porcelain"), "%s: nothing of the last task's", branch)
		assert.Equal(t, "a\n", readText(t, filepath.Join(wt, "a.txt")))
		assert.NoFileExists(t, filepath.Join(wt, "old.txt"))
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// A worktree with submodules is not reset: their git directories live
// outside it.
func TestResetRefusesAWorktreeWithSubmodules(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, ".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = ./x\n", "modules")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	wt := filepath.Join(dir, "wt")
	require.NoError(t, repo.AddWorktree(ctx, wt, "ralph/x", "HEAD"))
	pin, err := repo.WorktreePin(ctx, wt)
	require.NoError(t, err)
	err = repo.ResetWorktree(ctx, pin, wt, "HEAD")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "submodules"), err.Error())
}

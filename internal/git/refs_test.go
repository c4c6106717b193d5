package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// A branch read from the repository's files is the commit git names, as
// a loose ref and once packed, from the checkout and from a pinned
// worktree; what the files do not say plainly is left to git.
func TestResolveReadsBranchesAsGitDoes(t *testing.T) {
	dir := gittest.NewRepo(t)
	first := gittest.CommitFile(t, dir, "a.txt", "a\n", "first")
	base := "refs/heads/" + gittest.Run(t, dir, "branch", "--show-current")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	gittest.Run(t, dir, "branch", "ralph/x")

	for _, ref := range []string{base, "refs/heads/ralph/x"} {
		hash, ok := repo.readBranch(ref)
		require.True(t, ok, "%s is a loose ref", ref)
		assert.Equal(t, first, hash)
	}

	gittest.Run(t, dir, "pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(dir, ".git", "refs", "heads", "ralph", "x"))
	hash, ok := repo.readBranch("refs/heads/ralph/x")
	require.True(t, ok, "a packed ref is read from packed-refs")
	assert.Equal(t, first, hash)

	// A commit after packing writes a loose ref, which wins over the
	// packed one, as in git.
	second := gittest.CommitFile(t, dir, "b.txt", "b\n", "second")
	hash, err := repo.Resolve(ctx, base)
	require.NoError(t, err)
	assert.Equal(t, second, hash)

	wt := filepath.Join(t.TempDir(), "wt")
	require.NoError(t, repo.AddWorktree(ctx, wt, "ralph/wt", base))
	pin, err := repo.WorktreePin(ctx, wt)
	require.NoError(t, err)
	hash, ok = Repo{Dir: wt, Pin: pin}.readBranch(base)
	require.True(t, ok, "a pinned worktree's refs are its common directory's")
	assert.Equal(t, second, hash)
	_, ok = Repo{Dir: wt}.readBranch(base)
	assert.False(t, ok, "an unpinned worktree's repository is found by git, from its .git file")

	gittest.Run(t, dir, "symbolic-ref", "refs/heads/alias", base)
	_, ok = repo.readBranch("refs/heads/alias")
	assert.False(t, ok, "a symbolic ref is git's to follow")
	hash, err = repo.Resolve(ctx, "refs/heads/alias")
	require.NoError(t, err)
	assert.Equal(t, second, hash)

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	_, ok = Repo{Dir: sub}.readBranch(base)
	assert.False(t, ok, "below the top, git finds the repository")
	hash, err = Repo{Dir: sub}.Resolve(ctx, base)
	require.NoError(t, err)
	assert.Equal(t, second, hash)

	_, err = repo.Resolve(ctx, "refs/heads/nothing")
	require.Error(t, err, "a branch neither file has is git's to refuse")
	assert.Contains(t, err.Error(), "no commit named refs/heads/nothing")

	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git", "reftable"), 0o755))
	_, ok = repo.readBranch(base)
	assert.False(t, ok, "the reftable backend is git's to read")
}

// A pinned worktree whose commondir file was rewritten reads no ref from
// ralph's side either: git is asked, and refuses.
func TestResolveLeavesATamperedPinToGit(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "a.txt", "a\n", "first")
	base := "refs/heads/" + gittest.Run(t, dir, "branch", "--show-current")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	wt := filepath.Join(t.TempDir(), "wt")
	require.NoError(t, repo.AddWorktree(ctx, wt, "ralph/wt", base))
	pin, err := repo.WorktreePin(ctx, wt)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(pin.GitDir, "commondir"), []byte(t.TempDir()+"\n"), 0o644))
	_, err = Repo{Dir: wt, Pin: pin}.Resolve(ctx, base)
	var tampered *TamperedError
	assert.ErrorAs(t, err, &tampered)
}

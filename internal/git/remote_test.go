package git

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// A coordinator and a worker share a bare remote: the worker clones it,
// works on a task branch and pushes it with a work-in-progress ref, the
// coordinator fetches both, and the base branch's trailers say which tasks
// are merged.
func TestRemoteRoundTrip(t *testing.T) {
	ctx := t.Context()
	remote := filepath.Join(t.TempDir(), "shared.git")
	gittest.Run(t, t.TempDir(), "init", "-q", "--bare", remote)
	coord := gittest.NewRepo(t)
	base := gittest.CommitFile(t, coord, "README.md", "hi\n", "start")
	gittest.Run(t, coord, "remote", "add", "origin", remote)
	require.NoError(t, Repo{Dir: coord}.Push(ctx, "origin", "HEAD:refs/heads/main"))
	url, err := Repo{Dir: coord}.RemoteURL(ctx, "origin")
	require.NoError(t, err)
	assert.Equal(t, remote, url)

	cache := Repo{Dir: filepath.Join(t.TempDir(), "cache.git")}
	require.NoError(t, cache.CloneBare(ctx, url))
	tree := filepath.Join(t.TempDir(), "task")
	require.NoError(t, cache.AddWorktree(ctx, tree, "ralph/t-1", base))
	work := gittest.CommitFile(t, tree, "a.txt", "a\n", "task work")
	worker := Repo{Dir: tree}
	require.NoError(t, worker.Push(ctx, url, "+HEAD:refs/ralph/wip/t-1"))
	gittest.Run(t, tree, "commit", "-q", "--amend", "-m", "task work, redone")
	redone := gittest.Run(t, tree, "rev-parse", "HEAD")
	require.NoError(t, worker.Push(ctx, url, "+HEAD:refs/ralph/wip/t-1"), "a work-in-progress ref is replaced even when it does not fast-forward")
	require.Error(t, worker.Push(ctx, url), "no refspec")

	c := Repo{Dir: coord}
	require.NoError(t, c.Fetch(ctx, "origin", "+refs/ralph/wip/*:refs/ralph/wip/*"))
	got, err := c.Resolve(ctx, "refs/ralph/wip/t-1")
	require.NoError(t, err)
	assert.Equal(t, redone, got)
	assert.NotEqual(t, work, got)

	gittest.Run(t, coord, "merge", "-q", "--no-ff", "-m", WithTaskTrailer("ralph: merge t-1 (a)", "t-1"), got)
	merge := gittest.Run(t, coord, "rev-parse", "HEAD")
	gittest.Run(t, coord, "commit", "-q", "--allow-empty", "-m", WithTaskTrailer("ralph: merge t-2 (b)\n\nBody text.", "t-2"))
	second := gittest.Run(t, coord, "rev-parse", "HEAD")
	gittest.Run(t, coord, "commit", "-q", "--allow-empty", "-m", "unrelated\n\nRalph-Taskforce: no")

	merged, err := c.MergedTasks(ctx, "", "HEAD")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"t-1": merge, "t-2": second}, merged)
	since, err := c.MergedTasks(ctx, merge, "HEAD")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"t-2": second}, since, "only the commits after base")
}

func TestWithTaskTrailer(t *testing.T) {
	assert.Equal(t, "ralph: merge t-1 (x)\n\nRalph-Task: t-1\n", WithTaskTrailer("ralph: merge t-1 (x)\n", "t-1"))
}

// DeleteRemoteRefs asks the remote once and deletes only the refs named in
// full: one whose name ends as an asked one does is not the same ref, and
// one the remote lacks is no error.
func TestDeleteRemoteRefs(t *testing.T) {
	ctx := t.Context()
	remote := filepath.Join(t.TempDir(), "shared.git")
	gittest.Run(t, t.TempDir(), "init", "-q", "--bare", remote)
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "README.md", "hi\n", "start")
	r := Repo{Dir: dir}
	require.NoError(t, r.Push(ctx, remote, "HEAD:refs/heads/ralph/t-1", "HEAD:refs/ralph/wip/t-1", "HEAD:refs/heads/other/ralph/t-1"))

	require.NoError(t, r.DeleteRemoteRefs(ctx, remote, "refs/heads/ralph/t-1", "refs/ralph/wip/t-1", "refs/ralph/merge/t-1"))
	for ref, want := range map[string]bool{"refs/heads/ralph/t-1": false, "refs/ralph/wip/t-1": false, "refs/heads/other/ralph/t-1": true} {
		hash, err := r.RemoteRef(ctx, remote, ref)
		require.NoError(t, err)
		assert.Equal(t, want, hash != "", ref)
	}
	require.NoError(t, r.DeleteRemoteRefs(ctx, remote, "refs/ralph/wip/t-1"), "none left to delete")
}

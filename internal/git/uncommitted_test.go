package git

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestUncommittedTellsWhatChangedBetweenTwoLooks(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "tracked.txt", "a\n", "start")
	gittest.CommitFile(t, dir, "board/todo.json", "{}\n", "board")
	gittest.WriteFile(t, dir, "notes.txt", "mine\n")
	gittest.WriteFile(t, dir, "board/open.json", "[1]\n")
	gittest.WriteFile(t, dir, ".ralph/events.jsonl", "{}\n")
	repo := Repo{Dir: dir}
	before, err := repo.UncommittedContent(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"board/open.json", "notes.txt"}, slices.Sorted(maps.Keys(before)), ".ralph/ is never listed")
	assert.True(t, before["notes.txt"].Untracked())

	// What a tracker's command might do: change a tracked file, create
	// one, rewrite an untracked one with the same size, delete one.
	gittest.WriteFile(t, dir, "tracked.txt", "b\n")
	gittest.WriteFile(t, dir, "board/done.json", "[2]\n")
	gittest.WriteFile(t, dir, "board/open.json", "[3]\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "board/todo.json")))
	after, err := repo.UncommittedContent(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"board/done.json", "board/open.json", "board/todo.json", "tracked.txt"}, after.ChangedSince(before),
		"the untouched untracked file is not among them")
	assert.False(t, after["tracked.txt"].Untracked())
	assert.Equal(t, " D", after["board/todo.json"].Status)

	again, err := repo.UncommittedContent(t.Context())
	require.NoError(t, err)
	assert.Empty(t, again.ChangedSince(after), "nothing changed since")
	gittest.Run(t, dir, "checkout", "--", "tracked.txt")
	reverted, err := repo.UncommittedContent(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"tracked.txt"}, reverted.ChangedSince(again), "a path gone from the status changed too")
}

// FastForward refuses, as git does, to overwrite what is uncommitted in
// the checkout, and says which files are in the way; what is not in the
// way stays as it was.
func TestFastForwardNamesTheFilesInTheWay(t *testing.T) {
	t.Parallel()
	setUp := func(t *testing.T) (Repo, string) {
		dir := gittest.NewRepo(t)
		gittest.CommitFile(t, dir, "README.md", "hi\n", "start")
		gittest.Run(t, dir, "checkout", "-q", "-b", "task")
		gittest.WriteFile(t, dir, "notes.txt", "the task's notes\n")
		gittest.WriteFile(t, dir, "README.md", "hi\nthere\n")
		gittest.WriteFile(t, dir, "docs/guide.md", "a guide\n")
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", "task")
		tip := gittest.Run(t, dir, "rev-parse", "HEAD")
		gittest.Run(t, dir, "checkout", "-q", "main")
		return Repo{Dir: dir}, tip
	}
	t.Run("untracked", func(t *testing.T) {
		repo, tip := setUp(t)
		gittest.WriteFile(t, repo.Dir, "notes.txt", "mine\n")
		gittest.WriteFile(t, repo.Dir, "docs", "a file where the task has a directory\n")
		gittest.WriteFile(t, repo.Dir, "scratch.txt", "out of the way\n")
		err := repo.FastForward(t.Context(), tip)
		var inTheWay *OverwriteError
		require.ErrorAs(t, err, &inTheWay)
		assert.Equal(t, []string{"docs", "notes.txt"}, inTheWay.Untracked)
		assert.Empty(t, inTheWay.Modified)
		assert.Equal(t, "git merge --ff-only would overwrite untracked docs, notes.txt", err.Error())
		assert.Contains(t, inTheWay.Err.Error(), "untracked working tree files would be overwritten by merge", "git's own refusal is kept")
		assert.NotEqual(t, tip, gittest.Run(t, repo.Dir, "rev-parse", "HEAD"), "HEAD has not moved")
		assert.Equal(t, "mine\n", read(t, repo.Dir, "notes.txt"))

		require.NoError(t, os.Remove(filepath.Join(repo.Dir, "notes.txt")))
		require.NoError(t, os.Remove(filepath.Join(repo.Dir, "docs")))
		require.NoError(t, repo.FastForward(t.Context(), tip))
		assert.Equal(t, tip, gittest.Run(t, repo.Dir, "rev-parse", "HEAD"))
		assert.Equal(t, "out of the way\n", read(t, repo.Dir, "scratch.txt"), "an untracked file out of the way stays")
	})
	t.Run("modified", func(t *testing.T) {
		repo, tip := setUp(t)
		gittest.WriteFile(t, repo.Dir, "README.md", "hi\nmy edit\n")
		err := repo.FastForward(t.Context(), tip)
		var inTheWay *OverwriteError
		require.ErrorAs(t, err, &inTheWay)
		assert.Equal(t, []string{"README.md"}, inTheWay.Modified)
		assert.Equal(t, []string{"README.md"}, inTheWay.Files())
		assert.Equal(t, "git merge --ff-only would overwrite the uncommitted changes to README.md", err.Error())
		assert.Equal(t, "hi\nmy edit\n", read(t, repo.Dir, "README.md"))
	})
	t.Run("not a fast-forward", func(t *testing.T) {
		repo, tip := setUp(t)
		gittest.CommitFile(t, repo.Dir, "other.txt", "x\n", "diverge")
		gittest.WriteFile(t, repo.Dir, "notes.txt", "mine\n")
		err := repo.FastForward(t.Context(), tip)
		require.Error(t, err)
		var inTheWay *OverwriteError
		assert.False(t, errors.As(err, &inTheWay), "a diverged branch is not a file in the way: %v", err)
	})
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(data)
}

// overwrites works on git's paths, which use / on every system, Windows
// included.
func TestOverwrites(t *testing.T) {
	incoming := map[string]bool{"docs/guide.md": true, "build": true, "a/b/c.txt": true}
	cases := []struct {
		name string
		want bool
	}{
		{"docs/guide.md", true},  // the path itself
		{"build/out.bin", true},  // a file where one of its directories is
		{"a/b", true},            // files under it where it is a file
		{"a", true},              // and deeper
		{"docs/other.md", false}, // a sibling
		{"doc", false},           // a prefix that is not a directory of it
		{"docs/guide.md.orig", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, overwrites(incoming, tc.name))
		})
	}
}

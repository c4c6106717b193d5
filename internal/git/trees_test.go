package git

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestWorkTreeRecordsUncommittedFilesAndLeavesTheIndexAlone(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "a.txt", "one\n", "first")
	index := filepath.Join(t.TempDir(), "tree.index")
	g := Repo{Dir: dir}

	before, err := g.WorkTree(t.Context(), index)
	require.NoError(t, err)
	assert.Equal(t, gittest.Run(t, dir, "rev-parse", "HEAD^{tree}"), before, "a clean work tree is HEAD's tree")

	gittest.WriteFile(t, dir, "a.txt", "two\n")
	gittest.WriteFile(t, dir, "new.txt", "untracked\n")
	gittest.WriteFile(t, dir, ".ralph/state.json", "{}")
	after, err := g.WorkTree(t.Context(), index)
	require.NoError(t, err)
	require.NotEqual(t, before, after)

	diff, err := g.DiffTrees(t.Context(), before, after)
	require.NoError(t, err)
	assert.Contains(t, diff, "+two")
	assert.Contains(t, diff, "new.txt")
	assert.NotContains(t, diff, ".ralph", "ralph's own files are no change of the agent's")
	assert.Empty(t, gittest.Run(t, dir, "diff", "--cached", "--name-only"), "the user's index is untouched")
	assert.Contains(t, gittest.Run(t, dir, "status", "--porcelain"), "?? new.txt")
	fi, err := os.Stat(index)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the index lists the workspace's files: private")
}

func TestWorkTreeOutsideARepositoryIsEmpty(t *testing.T) {
	t.Parallel()
	tree, err := Repo{Dir: t.TempDir()}.WorkTree(t.Context(), filepath.Join(t.TempDir(), "i"))
	require.NoError(t, err)
	assert.Empty(t, tree)
}

func TestDiffFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFile(t, dir, "p1.md", "objective\nold line\n")
	gittest.WriteFile(t, dir, "p2.md", "objective\nnew line\n")
	diff, err := DiffFiles(t.Context(), dir, "p1.md", "p2.md")
	require.NoError(t, err)
	assert.Contains(t, diff, "--- p1.md\n+++ p2.md\n")
	assert.Contains(t, diff, "-old line\n+new line\n")
	same, err := DiffFiles(t.Context(), dir, "p1.md", "p1.md")
	require.NoError(t, err)
	assert.Empty(t, same)
}

// BenchmarkWorkTree is what recording an iteration's tree costs when the
// agent changed one file of a small repository: one op is one tree.
func BenchmarkWorkTree(b *testing.B) {
	dir := gittest.NewRepo(b)
	for i := range 50 {
		gittest.WriteFile(b, dir, filepath.Join("src", strconv.Itoa(i)+".txt"), "line\n")
	}
	gittest.Run(b, dir, "add", ".")
	gittest.Run(b, dir, "commit", "-qm", "files")
	index := filepath.Join(b.TempDir(), "tree.index")
	g := Repo{Dir: dir}
	i := 0
	for b.Loop() {
		i++
		gittest.WriteFile(b, dir, "src/0.txt", strconv.Itoa(i)+"\n")
		if _, err := g.WorkTree(context.Background(), index); err != nil {
			b.Fatal(err)
		}
	}
}

// CommitPaths commits the paths' changes, and only theirs, and reports
// whether there were any: nothing changed, or a path that is not there,
// commits nothing and is no error.
func TestCommitPathsCommitsOnlyItsPathsAndSaysWhetherItDid(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "TODO.md", "- [ ] a\n", "start")
	repo := Repo{Dir: dir}
	ctx := t.Context()
	head := func() string { return strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD")) }
	start := head()

	committed, err := repo.CommitPaths(ctx, "ralph: claim a", "TODO.md", ".tickets")
	require.NoError(t, err)
	assert.False(t, committed, "nothing changed")
	assert.Equal(t, start, head())

	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("- [x] a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("the user's\n"), 0o644))
	gittest.Run(t, dir, "add", "other.txt")
	committed, err = repo.CommitPaths(ctx, "ralph: close a", "TODO.md")
	require.NoError(t, err)
	assert.True(t, committed)
	assert.Equal(t, "TODO.md", gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD"), "only the tracker's file")
	assert.Equal(t, "A  other.txt", gittest.Run(t, dir, "status", "--porcelain"), "the user's staged file stays staged")

	// A tracked file's change is one git process; a file git does not
	// track yet, and a new file in a directory, are committed too.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("- [x] a\n- [ ] b\n"), 0o644))
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE", trace)
	committed, err = repo.CommitPaths(ctx, "ralph: claim b", "TODO.md")
	require.NoError(t, err)
	assert.True(t, committed)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "trace: built-in: git commit"), "git ran:\n%s", data)
	assert.NotContains(t, string(data), "built-in: git add")
	t.Setenv("GIT_TRACE", "")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "prd.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".tickets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".tickets", "b.md"), []byte("b\n"), 0o644))
	committed, err = repo.CommitPaths(ctx, "ralph: new files", "prd.json")
	require.NoError(t, err)
	assert.True(t, committed, "a file git does not track yet")
	committed, err = repo.CommitPaths(ctx, "ralph: new ticket", ".tickets")
	require.NoError(t, err)
	assert.True(t, committed, "a new file in a directory")
	assert.Equal(t, ".tickets/b.md", gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD"))
	assert.Equal(t, "A  other.txt", gittest.Run(t, dir, "status", "--porcelain"))
}

package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestGitHead(t *testing.T) {
	t.Parallel()
	t.Run("empty repository", func(t *testing.T) {
		head, err := Repo{Dir: gittest.NewRepo(t)}.Head(t.Context())
		require.NoError(t, err)
		assert.Empty(t, head)
	})
	t.Run("not a repository", func(t *testing.T) {
		head, err := Repo{Dir: t.TempDir()}.Head(t.Context())
		require.NoError(t, err)
		assert.Empty(t, head)
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := Repo{Dir: filepath.Join(t.TempDir(), "gone")}.Head(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "git rev-parse: exit status 128: fatal: cannot change to")
	})
	t.Run("after commits", func(t *testing.T) {
		dir := gittest.NewRepo(t)
		gittest.CommitFile(t, dir, "a.txt", "a", "first")
		want := gittest.CommitFile(t, dir, "b.txt", "b", "second")
		head, err := Repo{Dir: dir}.Head(t.Context())
		require.NoError(t, err)
		assert.Equal(t, want, head)
		assert.Len(t, head, 40)
	})
}

func TestGitIsRepo(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	gittest.WriteFile(t, dir, "sub/x", "x")
	cases := []struct {
		name string
		dir  string
		want bool
	}{
		{"repository", dir, true},
		{"subdirectory", filepath.Join(dir, "sub"), true},
		{"plain directory", t.TempDir(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, err := Repo{Dir: tc.dir}.IsRepo(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tc.want, ok)
		})
	}
}

func TestGitCommitsBetween(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	c1 := gittest.CommitFile(t, dir, "a.txt", "a", "first: add a")
	c2 := gittest.CommitFile(t, dir, "b.txt", "b", "second: add b")
	c3 := gittest.CommitFile(t, dir, "c.txt", "c", "third: add c")
	cases := []struct {
		name       string
		base, head string
		want       []Commit
	}{
		{"since the first", c1, c3, []Commit{{c2, "second: add b"}, {c3, "third: add c"}}},
		{"all", "", c3, []Commit{{c1, "first: add a"}, {c2, "second: add b"}, {c3, "third: add c"}}},
		{"up to a commit before HEAD", c1, c2, []Commit{{c2, "second: add b"}}},
		{"head at base", c3, c3, nil},
		{"no head (no commit yet, or not a repository)", "", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Repo{Dir: dir}.CommitsBetween(t.Context(), tc.base, tc.head)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("unknown base", func(t *testing.T) {
		_, err := Repo{Dir: dir}.CommitsBetween(t.Context(), "0123456789abcdef0123456789abcdef01234567", c3)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "git log: exit status 128")
	})
}

func TestWorkspaceSnapshot(t *testing.T) {
	t.Parallel()
	t.Run("not a repository", func(t *testing.T) {
		s, err := Repo{Dir: t.TempDir()}.snapshot(t.Context(), &Tree{})
		require.NoError(t, err)
		assert.Zero(t, s)
	})
	t.Run("empty repository", func(t *testing.T) {
		dir := gittest.NewRepo(t)
		w := NewWorkspace(dir)
		before := snapshot(t, w)
		assert.Len(t, before.Fingerprint, 64)
		assert.Empty(t, before.Head)
		gittest.WriteFile(t, dir, "new.txt", "new")
		assert.NotEqual(t, before.Fingerprint, snapshot(t, w).Fingerprint)
	})

	// Each step changes the workspace (or not) from the previous step's
	// state; change says whether the fingerprint must differ. The
	// reference fingerprint (status, diff against HEAD, every untracked
	// file read) must agree at every step.
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "tracked.txt", "one\n", "initial")
	w := NewWorkspace(dir)
	steps := []struct {
		name   string
		file   string // written relative to dir, unless empty
		data   string
		git    []string // run after writing, unless empty
		change bool
	}{
		{"no-op", "", "", nil, false},
		{"rewrite with the same content", "tracked.txt", "one\n", nil, false},
		{"edit a tracked file", "tracked.txt", "two\n", nil, true},
		{"edit it again", "tracked.txt", "three\n", nil, true},
		{"edit it again, same size", "tracked.txt", "thref\n", nil, true},
		{"add an untracked file", "untracked.txt", "u1", nil, true},
		{"edit the untracked file", "untracked.txt", "u2", nil, true},
		{"untracked file in a new directory", "dir/deep.txt", "d", nil, true},
		{"a name with spaces", "dir/a b.txt", "s", nil, true},
		{"edit the file with spaces", "dir/a b.txt", "t", nil, true},
		{"ralph's own files", ".ralph/events-1.jsonl", "{}\n", nil, false},
		{"ignored file", ".gitignore", "*.log\n", nil, true},
		{"write an ignored file", "build.log", "noise", nil, false},
		{"stage one file", "", "", []string{"add", "untracked.txt"}, true},
		{"edit the staged file", "untracked.txt", "u3", nil, true},
		{"commit everything", "", "", []string{"add", "-A"}, true},
		{"same tree, now committed", "", "", []string{"commit", "-q", "-m", "work"}, true},
		{"no-op after the commit", "", "", nil, false},
		{"rename a file", "", "", []string{"mv", "untracked.txt", "renamed.txt"}, true},
		{"commit the rename", "", "", []string{"commit", "-q", "-m", "rename"}, true},
		{"make a file executable", "", "", []string{"update-index", "--chmod=+x", "renamed.txt"}, true},
	}
	prev, prevRef := snapshot(t, w), referenceFingerprint(t, dir)
	for _, st := range steps {
		if st.file != "" {
			gittest.WriteFile(t, dir, st.file, st.data)
		}
		if st.git != nil {
			gittest.Run(t, dir, st.git...)
		}
		got, ref := snapshot(t, w), referenceFingerprint(t, dir)
		assertStep(t, st.name, st.change, prev.Fingerprint, got.Fingerprint)
		assertStep(t, st.name+" (reference)", st.change, prevRef, ref)
		assert.Equal(t, gittest.Run(t, dir, "rev-parse", "HEAD"), got.Head, st.name)
		prev, prevRef = got, ref
	}

	t.Run("reverting an edit restores it", func(t *testing.T) {
		before := snapshot(t, w)
		gittest.WriteFile(t, dir, "tracked.txt", "changed\n")
		assert.NotEqual(t, before, snapshot(t, w))
		gittest.WriteFile(t, dir, "tracked.txt", "thref\n")
		assert.Equal(t, before, snapshot(t, w))
	})
	t.Run("deleting a tracked file", func(t *testing.T) {
		before := snapshot(t, w)
		require.NoError(t, os.Remove(filepath.Join(dir, "tracked.txt")))
		assert.NotEqual(t, before, snapshot(t, w))
	})
}

func snapshot(t *testing.T, w Workspace) Snapshot {
	t.Helper()
	s, err := w.Snapshot(t.Context())
	require.NoError(t, err)
	return s
}

// TestWorktrees lists the main worktree, one on a branch and one whose
// directory is gone, which git would prune.
func TestWorktrees(t *testing.T) {
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "a.txt", "a\n", "first")
	ctx := t.Context()
	repo := Repo{Dir: dir}
	kept, gone := filepath.Join(t.TempDir(), "kept"), filepath.Join(t.TempDir(), "gone")
	require.NoError(t, repo.AddWorktree(ctx, kept, "ralph/t1", "HEAD"))
	require.NoError(t, repo.AddWorktree(ctx, gone, "ralph/t2", "HEAD"))
	require.NoError(t, os.RemoveAll(gone))

	list, err := repo.Worktrees(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.True(t, sameFile(dir, list[0].Path))
	assert.Equal(t, "ralph/t1", list[1].Branch)
	assert.Empty(t, list[1].Prunable)
	assert.Len(t, list[1].Head, 40)
	assert.Equal(t, "ralph/t2", list[2].Branch)
	assert.NotEmpty(t, list[2].Prunable)

	require.NoError(t, repo.PruneWorktrees(ctx))
	list, err = repo.Worktrees(ctx)
	require.NoError(t, err)
	assert.Len(t, list, 2)
}

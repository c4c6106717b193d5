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

func TestGitCommitsSince(t *testing.T) {
	t.Parallel()
	dir := gittest.NewRepo(t)
	c1 := gittest.CommitFile(t, dir, "a.txt", "a", "first: add a")
	c2 := gittest.CommitFile(t, dir, "b.txt", "b", "second: add b")
	c3 := gittest.CommitFile(t, dir, "c.txt", "c", "third: add c")
	cases := []struct {
		name string
		base string
		want []Commit
	}{
		{"since the first", c1, []Commit{{c2, "second: add b"}, {c3, "third: add c"}}},
		{"all", "", []Commit{{c1, "first: add a"}, {c2, "second: add b"}, {c3, "third: add c"}}},
		{"since HEAD", c3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Repo{Dir: dir}.CommitsSince(t.Context(), tc.base)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("empty repository", func(t *testing.T) {
		got, err := Repo{Dir: gittest.NewRepo(t)}.CommitsSince(t.Context(), "")
		require.NoError(t, err)
		assert.Nil(t, got)
	})
	t.Run("not a repository", func(t *testing.T) {
		got, err := Repo{Dir: t.TempDir()}.CommitsSince(t.Context(), "")
		require.NoError(t, err)
		assert.Nil(t, got)
	})
	t.Run("unknown base", func(t *testing.T) {
		_, err := Repo{Dir: dir}.CommitsSince(t.Context(), "0123456789abcdef0123456789abcdef01234567")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "git log: exit status 128")
	})
}

func TestGitFingerprint(t *testing.T) {
	t.Parallel()
	t.Run("not a repository", func(t *testing.T) {
		fp, err := Repo{Dir: t.TempDir()}.Fingerprint(t.Context())
		require.NoError(t, err)
		assert.Empty(t, fp)
	})
	t.Run("empty repository", func(t *testing.T) {
		dir := gittest.NewRepo(t)
		g := Repo{Dir: dir}
		before := fingerprint(t, g)
		assert.Len(t, before, 64)
		gittest.WriteFile(t, dir, "new.txt", "new")
		assert.NotEqual(t, before, fingerprint(t, g))
	})

	// Each step changes the workspace (or not) from the previous step's
	// state; change says whether the fingerprint must differ.
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "tracked.txt", "one\n", "initial")
	g := Repo{Dir: dir}
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
		{"add an untracked file", "untracked.txt", "u1", nil, true},
		{"edit the untracked file", "untracked.txt", "u2", nil, true},
		{"untracked file in a new directory", "dir/deep.txt", "d", nil, true},
		{"ralph's own files", ".ralph/events-1.jsonl", "{}\n", nil, false},
		{"ignored file", ".gitignore", "*.log\n", nil, true},
		{"write an ignored file", "build.log", "noise", nil, false},
		{"commit everything", "", "", []string{"add", "-A"}, true},
		{"same tree, now committed", "", "", []string{"commit", "-q", "-m", "work"}, true},
		{"no-op after the commit", "", "", nil, false},
	}
	prev := fingerprint(t, g)
	for _, st := range steps {
		if st.file != "" {
			gittest.WriteFile(t, dir, st.file, st.data)
		}
		if st.git != nil {
			gittest.Run(t, dir, st.git...)
		}
		got := fingerprint(t, g)
		assertStep(t, st.name, st.change, prev, got)
		prev = got
	}

	t.Run("reverting an edit restores it", func(t *testing.T) {
		before := fingerprint(t, g)
		gittest.WriteFile(t, dir, "tracked.txt", "changed\n")
		assert.NotEqual(t, before, fingerprint(t, g))
		gittest.WriteFile(t, dir, "tracked.txt", "three\n")
		assert.Equal(t, before, fingerprint(t, g))
	})
	t.Run("deleting a tracked file", func(t *testing.T) {
		before := fingerprint(t, g)
		require.NoError(t, os.Remove(filepath.Join(dir, "tracked.txt")))
		assert.NotEqual(t, before, fingerprint(t, g))
	})
}

func fingerprint(t *testing.T, g Repo) string {
	t.Helper()
	fp, err := g.Fingerprint(t.Context())
	require.NoError(t, err)
	return fp
}

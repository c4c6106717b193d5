package treewatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree is a directory with a skipped .ralph/ that holds the barrier.
type tree struct {
	t    *testing.T
	root string
}

func newTree(t *testing.T) tree {
	t.Helper()
	root := t.TempDir()
	if !reliable([]string{root}) {
		t.Skip("the test directory is not on a file system whose changes inotify reports")
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".ralph"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src", "pkg"), 0o755))
	tr := tree{t: t, root: root}
	tr.write("src/pkg/a.go", "package pkg\n")
	return tr
}

func (tr tree) path(rel string) string { return filepath.Join(tr.root, filepath.FromSlash(rel)) }

func (tr tree) write(rel, content string) {
	tr.t.Helper()
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(tr.path(rel)), 0o755))
	require.NoError(tr.t, os.WriteFile(tr.path(rel), []byte(content), 0o644))
}

func (tr tree) watch(mod ...func(*Options)) *Watch {
	opts := Options{Roots: []string{tr.root}, Skip: []string{tr.path(".ralph")}, Barrier: tr.path(".ralph/watch.barrier")}
	for _, m := range mod {
		m(&opts)
	}
	w := New(opts)
	tr.t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestChangedSeesEveryKindOfChange(t *testing.T) {
	tr := newTree(t)
	w := tr.watch()
	require.False(t, w.Changed(), "nothing happened since New")

	changes := []struct {
		name string
		do   func()
	}{
		{"a file written", func() { tr.write("src/pkg/a.go", "package pkg // edited\n") }},
		{"a file created at the top", func() { tr.write("README.md", "hi\n") }},
		{"a mode changed", func() { require.NoError(t, os.Chmod(tr.path("README.md"), 0o755)) }},
		{"a file renamed", func() { require.NoError(t, os.Rename(tr.path("README.md"), tr.path("src/README.md"))) }},
		{"a file removed", func() { require.NoError(t, os.Remove(tr.path("src/README.md"))) }},
		{"a directory tree made at once", func() { tr.write("new/deep/er/b.go", "package er\n") }},
		{"a file written in a directory made since New", func() { tr.write("new/deep/er/b.go", "package er // edited\n") }},
		{"a directory made empty, then", func() { require.NoError(t, os.MkdirAll(tr.path("empty"), 0o755)) }},
		{"a file created in it", func() { tr.write("empty/c.go", "package empty\n") }},
		{"another process writing", func() {
			out, err := exec.Command("sh", "-c", "echo more >> "+tr.path("src/pkg/a.go")).CombinedOutput()
			require.NoError(t, err, string(out))
		}},
		{"a directory moved in from outside", func() {
			outside := filepath.Join(t.TempDir(), "moved")
			require.NoError(t, os.MkdirAll(filepath.Join(outside, "sub"), 0o755))
			require.NoError(t, os.Rename(outside, tr.path("moved")))
		}},
		{"a file written in the moved-in directory", func() { tr.write("moved/sub/d.go", "package sub\n") }},
	}
	for _, c := range changes {
		c.do()
		assert.True(t, w.Changed(), "%s is a change", c.name)
		assert.False(t, w.Changed(), "nothing more after %s", c.name)
	}
}

func TestChangesInSkippedDirectoriesDoNotCount(t *testing.T) {
	tr := newTree(t)
	w := tr.watch()
	tr.write(".ralph/events.jsonl", "{}\n")
	tr.write(".ralph/runs/r1/iter-0001.jsonl", "{}\n")
	assert.False(t, w.Changed())
	require.NoError(t, os.RemoveAll(tr.path(".ralph/runs")))
	assert.False(t, w.Changed())
}

func TestWhereItCannotBeSureItSaysChanged(t *testing.T) {
	t.Run("no watch", func(t *testing.T) {
		var w *Watch
		assert.True(t, w.Changed())
		assert.NoError(t, w.Close())
	})
	t.Run("more directories than it may watch", func(t *testing.T) {
		tr := newTree(t)
		w := tr.watch(func(o *Options) { o.MaxDirs = 2 })
		assert.True(t, w.Changed())
		assert.True(t, w.Changed())
	})
	t.Run("a new directory past the limit", func(t *testing.T) {
		tr := newTree(t)
		w := tr.watch(func(o *Options) { o.MaxDirs = 3 }) // root, src, src/pkg
		require.False(t, w.Changed())
		tr.write("more/e.go", "package more\n")
		assert.True(t, w.Changed())
		assert.True(t, w.Changed(), "a directory it could not watch may change unseen")
	})
	t.Run("the barrier is gone", func(t *testing.T) {
		tr := newTree(t)
		w := tr.watch()
		require.False(t, w.Changed())
		require.NoError(t, os.RemoveAll(tr.path(".ralph")))
		assert.True(t, w.Changed())
		assert.True(t, w.Changed())
	})
	t.Run("no barrier", func(t *testing.T) {
		tr := newTree(t)
		w := tr.watch(func(o *Options) { o.Barrier = "" })
		assert.True(t, w.Changed())
	})
	t.Run("closed", func(t *testing.T) {
		tr := newTree(t)
		w := tr.watch()
		require.NoError(t, w.Close())
		assert.True(t, w.Changed())
	})
}

// A change to a path that the caller's choices rest on (what is skipped)
// is a change, and makes the watch stale: a new one must be made.
func TestStalePaths(t *testing.T) {
	tr := newTree(t)
	w := tr.watch(func(o *Options) { o.Stale = func(p string) bool { return filepath.Base(p) == ".gitignore" } })
	tr.write("src/a.txt", "a\n")
	require.True(t, w.Changed())
	assert.False(t, w.Stale(), "an ordinary change")
	tr.write("src/.gitignore", "*.log\n")
	assert.True(t, w.Changed())
	assert.True(t, w.Stale())
	assert.True(t, w.Changed(), "a stale watch says changed until it is replaced")
}

// A barrier a repository brought as a link is not followed: the file it
// points to keeps its contents and its times, and the watch, without a
// barrier of its own, says "changed".
func TestABarrierThatIsALinkIsNotFollowed(t *testing.T) {
	tr := newTree(t)
	outside := filepath.Join(t.TempDir(), "precious.txt")
	require.NoError(t, os.WriteFile(outside, []byte("mine\n"), 0o644))
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	require.NoError(t, os.Chtimes(outside, old, old))
	require.NoError(t, os.Symlink(outside, tr.path(".ralph/watch.barrier")))

	w := tr.watch()
	assert.True(t, w.Changed())
	assert.True(t, w.Changed())
	fi, err := os.Stat(outside)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(old), "the link's target was not touched: %s", fi.ModTime())
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data))
}

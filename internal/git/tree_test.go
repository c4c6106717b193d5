package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

func TestTreeFingerprint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFile(t, dir, "notes.txt", "one\n")
	tree := &Tree{Dir: dir}
	// Each step changes the workspace (or not) from the previous step's
	// state; change says whether the fingerprint must differ. Writes come
	// quickly one after another, within the racy window, so equal sizes
	// and near-equal times must not hide an edit.
	steps := []struct {
		name   string
		do     func()
		change bool
	}{
		{"no-op", func() {}, false},
		{"rewrite with the same content", func() { gittest.WriteFile(t, dir, "notes.txt", "one\n") }, false},
		{"edit, same size", func() { gittest.WriteFile(t, dir, "notes.txt", "two\n") }, true},
		{"edit again, same size", func() { gittest.WriteFile(t, dir, "notes.txt", "six\n") }, true},
		{"new file in a new directory", func() { gittest.WriteFile(t, dir, "src/deep/a.go", "package a\n") }, true},
		{"empty directory", func() { require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755)) }, false},
		{"ralph's own files", func() { gittest.WriteFile(t, dir, ".ralph/events-1.jsonl", "{}\n") }, false},
		{"a .git directory", func() { gittest.WriteFile(t, dir, ".git/index", "x") }, false},
		{"a nested .hg directory", func() { gittest.WriteFile(t, dir, "vendor/lib/.hg/store", "x") }, false},
		{"a file called .ralph below the top", func() { gittest.WriteFile(t, dir, "sub/.ralph/x", "x") }, true},
		{"mode change", func() { require.NoError(t, os.Chmod(filepath.Join(dir, "notes.txt"), 0o755)) }, true},
		{"symlink", func() { require.NoError(t, os.Symlink("notes.txt", filepath.Join(dir, "link"))) }, true},
		{"rename", func() {
			require.NoError(t, os.Rename(filepath.Join(dir, "src/deep/a.go"), filepath.Join(dir, "src/deep/b.go")))
		}, true},
		{"delete", func() { require.NoError(t, os.Remove(filepath.Join(dir, "src/deep/b.go"))) }, true},
	}
	prev := treeFingerprint(t, tree)
	assert.Len(t, prev, 64)
	for _, st := range steps {
		st.do()
		got := treeFingerprint(t, tree)
		assertStep(t, st.name, st.change, prev, got)
		prev = got
	}
	t.Run("a fresh Tree agrees with one that has a cache", func(t *testing.T) {
		assert.Equal(t, treeFingerprint(t, tree), treeFingerprint(t, &Tree{Dir: dir}))
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := (&Tree{Dir: filepath.Join(dir, "gone")}).Fingerprint(t.Context())
		require.Error(t, err)
	})
}

// A file whose hash was cached while it could still change within the same
// clock tick is read again: equal metadata proves nothing then.
func TestTreeFingerprintRacyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gittest.WriteFile(t, dir, "a.txt", "one")
	path := filepath.Join(dir, "a.txt")
	mtime := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	require.NoError(t, os.Chtimes(path, mtime, mtime))
	// The scan runs within the racy window of the file's mtime.
	tree := &Tree{Dir: dir, Now: func() time.Time { return mtime.Add(time.Second) }}
	before := treeFingerprint(t, tree)
	gittest.WriteFile(t, dir, "a.txt", "two")
	require.NoError(t, os.Chtimes(path, mtime, mtime))
	assert.NotEqual(t, before, treeFingerprint(t, tree), "an edit that kept size and mtime was seen")

	// Once settled, the cached hash stands for the file: the scan trusts
	// size and mtime, as git trusts its index.
	tree.Now = func() time.Time { return mtime.Add(time.Minute) }
	settled := treeFingerprint(t, tree)
	assert.Equal(t, settled, treeFingerprint(t, tree))
}

func TestTreeFingerprintLimits(t *testing.T) {
	t.Parallel()
	t.Run("large files count by size and mtime", func(t *testing.T) {
		dir := t.TempDir()
		gittest.WriteFile(t, dir, "big.bin", "0123456789")
		tree := &Tree{Dir: dir, MaxFileBytes: 4}
		before := treeFingerprint(t, tree)
		old := time.Now().Add(-time.Hour)
		require.NoError(t, os.Chtimes(filepath.Join(dir, "big.bin"), old, old))
		assert.NotEqual(t, before, treeFingerprint(t, tree), "a touched large file is a change")
	})
	t.Run("past the read budget files count by size and mtime, consistently", func(t *testing.T) {
		dir := t.TempDir()
		for i := range 10 {
			gittest.WriteFile(t, dir, fmt.Sprintf("f%d.txt", i), "0123456789")
		}
		tree := &Tree{Dir: dir, ReadBudget: 35}
		first := treeFingerprint(t, tree)
		assert.Equal(t, first, treeFingerprint(t, tree), "no change, same fingerprint")
		gittest.WriteFile(t, dir, "f9.txt", "9876543210")
		assert.NotEqual(t, first, treeFingerprint(t, tree))
	})
	t.Run("entries past MaxEntries are not visited", func(t *testing.T) {
		dir := t.TempDir()
		for i := range 5 {
			gittest.WriteFile(t, dir, fmt.Sprintf("f%d.txt", i), "x")
		}
		tree := &Tree{Dir: dir, MaxEntries: 3}
		before := treeFingerprint(t, tree)
		gittest.WriteFile(t, dir, "f4.txt", "changed past the limit")
		assert.Equal(t, before, treeFingerprint(t, tree))
		gittest.WriteFile(t, dir, "f0.txt", "changed within it")
		assert.NotEqual(t, before, treeFingerprint(t, tree))
	})
	t.Run("cancelled", func(t *testing.T) {
		dir := t.TempDir()
		gittest.WriteFile(t, dir, "a.txt", "x")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := (&Tree{Dir: dir}).Fingerprint(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func treeFingerprint(t *testing.T, tree *Tree) string {
	t.Helper()
	fp, err := tree.Fingerprint(t.Context())
	require.NoError(t, err)
	return fp
}

// BenchmarkTreeFingerprint scans a tree of 3,000 source-sized files in 150
// directories: cold is the first scan of a run (every file read), warm a
// later one (the cache spares unchanged files; one lstat each).
func BenchmarkTreeFingerprint(b *testing.B) {
	dir := b.TempDir()
	content := make([]byte, 4096)
	for i := range content {
		content[i] = byte('a' + i%26)
	}
	for d := range 150 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
		require.NoError(b, os.MkdirAll(sub, 0o755))
		for f := range 20 {
			require.NoError(b, os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.go", f)), content, 0o644))
		}
	}
	// Settle the files, so the warm scan trusts the cache as it would
	// for a tree the agent is not touching.
	old := time.Now().Add(-time.Hour)
	require.NoError(b, filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	}))
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := (&Tree{Dir: dir}).Fingerprint(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		tree := &Tree{Dir: dir}
		if _, err := tree.Fingerprint(b.Context()); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := tree.Fingerprint(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// assertStep checks that a step changed the fingerprint from prev to got
// when it should have, and only then.
func assertStep(t *testing.T, name string, change bool, prev, got string) {
	t.Helper()
	if change {
		assert.NotEqual(t, prev, got, "step %q must change the fingerprint", name)
	} else {
		assert.Equal(t, prev, got, "step %q must not change the fingerprint", name)
	}
}

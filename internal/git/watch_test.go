package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// countGit puts a git first on PATH that counts its runs, and returns how
// to read the count.
func countGit(t *testing.T) func() int {
	t.Helper()
	real, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := t.TempDir()
	count := filepath.Join(bin, "count")
	script := "#!/bin/sh\necho >> " + count + "\nexec " + real + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "\n")
	}
}

// watched is a workspace with its .ralph/, so that it watches its files.
func watched(t *testing.T, dir string) Workspace {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, StateDir), 0o755))
	w := NewWorkspace(dir)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// fresh is what a workspace that does not watch sees now.
func fresh(t *testing.T, dir string) Snapshot {
	t.Helper()
	w := NewWorkspace(dir)
	w.seen.start.Do(func() {}) // no watch: every snapshot looks
	return snapshot(t, w)
}

// A workspace nothing touched is not looked at again; every change to it,
// in the work tree or in git's own directory, is.
func TestWatchedWorkspaceLooksOnlyAfterAChange(t *testing.T) {
	gits := countGit(t)
	dir := gittest.NewRepo(t)
	gittest.CommitFile(t, dir, "main.go", "package main\n", "start")
	w := watched(t, dir)
	first := snapshot(t, w)
	if w.seen.watch.Changed() {
		t.Skip("no file watch here (not Linux, or not a local file system)")
	}
	looks := gits()

	gittest.WriteFile(t, dir, StateDir+"/events.jsonl", "{}\n")
	assert.Equal(t, first, snapshot(t, w), "ralph's own files are no change")
	assert.Equal(t, looks, gits(), "and cost no git process")

	steps := []struct {
		name string
		do   func()
	}{
		{"a file edited", func() { gittest.WriteFile(t, dir, "main.go", "package main // edited\n") }},
		{"a file staged", func() { gittest.Run(t, dir, "add", "main.go") }},
		{"a commit", func() { gittest.Run(t, dir, "commit", "-q", "-m", "edit") }},
		{"an untracked file in a new directory", func() { gittest.WriteFile(t, dir, "pkg/new.go", "package pkg\n") }},
		{"that file edited", func() { gittest.WriteFile(t, dir, "pkg/new.go", "package pkg // edited\n") }},
		{"a branch switched", func() { gittest.Run(t, dir, "checkout", "-q", "-b", "other") }},
	}
	prev := first
	for _, s := range steps {
		s.do()
		got := snapshot(t, w)
		assert.Equal(t, fresh(t, dir), got, "after %s the snapshot is what a new look gives", s.name)
		if s.name != "a branch switched" {
			assert.NotEqual(t, prev, got, "%s is a change", s.name)
		}
		prev = got
		looks = gits()
		assert.Equal(t, got, snapshot(t, w), "nothing since %s", s.name)
		assert.Equal(t, looks, gits(), "no git process when nothing changed since %s", s.name)
	}
}

// In a linked worktree, and in a workspace below the repository's top, the
// git directories lie outside the workspace, and are watched all the same.
func TestWatchedWorkspaceSeesGitDirectoriesOutsideIt(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "a.txt", "a\n", "start")
	cases := map[string]string{}
	linked := filepath.Join(t.TempDir(), "linked")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "slot", linked)
	cases["a linked worktree"] = linked
	sub := filepath.Join(main, "sub")
	gittest.WriteFile(t, main, "sub/b.txt", "b\n")
	gittest.Run(t, main, "add", "sub")
	gittest.Run(t, main, "commit", "-q", "-m", "sub")
	cases["a subdirectory"] = sub
	for name, dir := range cases {
		t.Run(name, func(t *testing.T) {
			w := watched(t, dir)
			before := snapshot(t, w)
			if w.seen.watch.Changed() {
				t.Skip("no file watch here")
			}
			gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", "empty")
			after := snapshot(t, w)
			assert.NotEqual(t, before.Head, after.Head, "a commit moves HEAD")
			assert.Equal(t, fresh(t, dir), after)
		})
	}
}

func TestFindGitDirs(t *testing.T) {
	main := gittest.NewRepo(t)
	gittest.CommitFile(t, main, "a.txt", "a\n", "start")
	linked := filepath.Join(t.TempDir(), "linked")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "slot", linked)
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		require.NoError(t, err)
		return r
	}
	for _, dir := range []string{main, filepath.Join(main, "sub"), linked} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		gitDir, commonDir, ok := findGitDirs(dir)
		require.True(t, ok, dir)
		wantGit := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "--absolute-git-dir"))
		wantCommon := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"))
		assert.Equal(t, real(wantGit), real(gitDir), dir)
		assert.Equal(t, real(wantCommon), real(commonDir), dir)
	}
	_, _, ok := findGitDirs(t.TempDir())
	assert.False(t, ok)
}

// Directories git ignores whole are not watched: what happens there is no
// change. When a .gitignore changes, what is ignored is asked again.
func TestWatchedWorkspaceAndIgnoredDirectories(t *testing.T) {
	gits := countGit(t)
	dir := gittest.NewRepo(t)
	gittest.WriteFile(t, dir, "node_modules/left-pad/index.js", "module.exports = 1\n")
	gittest.WriteFile(t, dir, "vendor/kept.go", "package vendor\n")
	gittest.Run(t, dir, "add", "vendor/kept.go")
	gittest.WriteFile(t, dir, ".gitignore", "node_modules/\nvendor/\n")
	gittest.CommitFile(t, dir, "main.go", "package main\n", "start")
	w := watched(t, dir)
	first := snapshot(t, w)
	if w.seen.watch.Changed() {
		t.Skip("no file watch here")
	}
	looks := gits()
	gittest.WriteFile(t, dir, "node_modules/left-pad/index.js", "module.exports = 2\n")
	gittest.WriteFile(t, dir, "node_modules/new-dep/index.js", "module.exports = 3\n")
	assert.Equal(t, first, snapshot(t, w))
	assert.Equal(t, looks, gits(), "an ignored directory is not watched")

	gittest.WriteFile(t, dir, "vendor/kept.go", "package vendor // edited\n")
	edited := snapshot(t, w)
	assert.NotEqual(t, first, edited, "a tracked file in an ignored directory counts")

	gittest.WriteFile(t, dir, ".gitignore", "vendor/\n")
	unignored := snapshot(t, w)
	assert.NotEqual(t, edited, unignored, "node_modules/ is no longer ignored")
	assert.Equal(t, fresh(t, dir), unignored)
	gittest.WriteFile(t, dir, "node_modules/new-dep/index.js", "module.exports = 4\n")
	assert.Equal(t, fresh(t, dir), snapshot(t, w), "and is watched now")
	assert.NotEqual(t, unignored, snapshot(t, w))
}

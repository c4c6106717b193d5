package git

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// What counts as a changed file, as the README says: in a git repository
// what git sees (ignored files do not count); outside one, or without git,
// the files themselves.
func TestWorkspaceFingerprint(t *testing.T) {
	fingerprint := func(t *testing.T, r Workspace) string {
		t.Helper()
		s := snapshot(t, r)
		require.Len(t, s.Fingerprint, 64)
		return s.Fingerprint
	}
	t.Run("in a git repository ignored files do not count", func(t *testing.T) {
		dir := t.TempDir()
		gittest.Run(t, dir, "init", "-q", ".")
		gittest.WriteFile(t, dir, ".gitignore", "*.log\n")
		r := NewWorkspace(dir)
		before := fingerprint(t, r)
		gittest.WriteFile(t, dir, "build.log", "noise")
		assert.Equal(t, before, fingerprint(t, r))
		gittest.WriteFile(t, dir, "main.go", "package git\n")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
	t.Run("outside one every file counts", func(t *testing.T) {
		dir := t.TempDir()
		r := NewWorkspace(dir)
		before := fingerprint(t, r)
		gittest.WriteFile(t, dir, "build.log", "noise")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
	t.Run("without git installed", func(t *testing.T) {
		dir := t.TempDir()
		gittest.Run(t, dir, "init", "-q", ".")
		t.Setenv("PATH", t.TempDir())
		r := NewWorkspace(dir)
		before := fingerprint(t, r)
		gittest.WriteFile(t, dir, "main.go", "package git\n")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
}

// Without a .git above it a directory is not asked about: git would only
// say it is not a repository. An agent's `git init` makes it one.
func TestMayBeRepo(t *testing.T) {
	dir := t.TempDir()
	assert.False(t, Repo{Dir: dir}.mayBeRepo())
	gittest.Run(t, dir, "init", "-q", ".")
	gittest.WriteFile(t, dir, "sub/file.txt", "x")
	assert.True(t, Repo{Dir: dir}.mayBeRepo())
	assert.True(t, Repo{Dir: dir + "/sub"}.mayBeRepo())
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What counts as a changed file, as the README says: in a git repository
// what git sees (ignored files do not count); outside one, or without git,
// the files themselves.
func TestWorkspaceFingerprint(t *testing.T) {
	fingerprint := func(t *testing.T, r gitRepo) string {
		t.Helper()
		fp, err := r.Fingerprint(t.Context())
		require.NoError(t, err)
		require.Len(t, fp, 64)
		return fp
	}
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	t.Run("in a git repository ignored files do not count", func(t *testing.T) {
		dir := t.TempDir()
		git(t, dir, "init", "-q", ".")
		write(t, dir, ".gitignore", "*.log\n")
		r := newGitRepo(dir)
		before := fingerprint(t, r)
		write(t, dir, "build.log", "noise")
		assert.Equal(t, before, fingerprint(t, r))
		write(t, dir, "main.go", "package main\n")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
	t.Run("outside one every file counts", func(t *testing.T) {
		dir := t.TempDir()
		r := newGitRepo(dir)
		before := fingerprint(t, r)
		write(t, dir, "build.log", "noise")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
	t.Run("without git installed", func(t *testing.T) {
		dir := t.TempDir()
		git(t, dir, "init", "-q", ".")
		t.Setenv("PATH", t.TempDir())
		r := newGitRepo(dir)
		before := fingerprint(t, r)
		write(t, dir, "main.go", "package main\n")
		assert.NotEqual(t, before, fingerprint(t, r))
	})
}

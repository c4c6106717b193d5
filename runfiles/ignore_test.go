package runfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIgnoreOwnFilesFollowsMemoriesShared(t *testing.T) {
	dir := filepath.Join(t.TempDir(), DirName)
	path := filepath.Join(dir, IgnoreFile)

	require.NoError(t, IgnoreOwnFiles(dir, false))
	assert.Equal(t, ignoreEverything, readString(t, path))
	require.NoError(t, IgnoreOwnFiles(dir, true))
	assert.Equal(t, ignoreAllButMemories, readString(t, path), "turning memories.shared on rewrites ralph's file")
	require.NoError(t, IgnoreOwnFiles(dir, false))
	assert.Equal(t, ignoreEverything, readString(t, path), "and turning it off again")
}

func TestIgnoreOwnFilesKeepsTheUsersOwnFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), DirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, IgnoreFile)
	mine := "*\n!notes.md\n"
	require.NoError(t, os.WriteFile(path, []byte(mine), 0o644))

	require.NoError(t, IgnoreOwnFiles(dir, true))
	assert.Equal(t, mine, readString(t, path))
	require.NoError(t, IgnoreOwnFilesIfMissing(dir))
	assert.Equal(t, mine, readString(t, path))
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

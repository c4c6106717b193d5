package runfiles

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStaleLock: a lock file naming a holder that let go is stale, and
// ClearStaleLock empties it; one held by a live lock is neither, and is
// left alone.
func TestStaleLock(t *testing.T) {
	ws := t.TempDir()
	path := In(ws).Lock()
	require.NoError(t, os.MkdirAll(In(ws).Path(), 0o700))
	data, err := json.Marshal(LockInfo{RunID: "r1", PID: 999999999})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o600))

	info, stale := StaleLock(path)
	require.True(t, stale)
	assert.Equal(t, "r1", info.RunID)
	cleared, err := ClearStaleLock(path)
	require.NoError(t, err)
	assert.True(t, cleared)
	_, stale = StaleLock(path)
	assert.False(t, stale, "emptied")
	assert.FileExists(t, path)

	lock, err := AcquireLock(t.Context(), path, LockInfo{RunID: "r2", PID: os.Getpid()}, LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()
	_, stale = StaleLock(path)
	assert.False(t, stale, "held")
	cleared, err = ClearStaleLock(path)
	require.NoError(t, err)
	assert.False(t, cleared)
	info, err = ReadLockInfo(path)
	require.NoError(t, err)
	assert.Equal(t, "r2", info.RunID, "the holder's lock is untouched")
}

// TestTempLeftovers finds the old temporary files under .ralph/, never a
// fresh one, one of ralph's own files, or one through a link, and removes
// only what is under .ralph/.
func TestTempLeftovers(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	d := In(ws)
	require.NoError(t, os.MkdirAll(filepath.Join(d.Path(), RunsDir, "r1"), 0o700))
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".state.json123456789", filepath.Join(RunsDir, "r1", ".summary.md1234567"), "state.json", ".fresh.json12345678"} {
		require.NoError(t, os.WriteFile(filepath.Join(d.Path(), name), []byte("x"), 0o600))
		if name != ".fresh.json12345678" {
			require.NoError(t, os.Chtimes(filepath.Join(d.Path(), name), old, old))
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, ".x.json123456789"), []byte("x"), 0o600))
	require.NoError(t, os.Chtimes(filepath.Join(outside, ".x.json123456789"), old, old))
	require.NoError(t, os.Symlink(outside, filepath.Join(d.Path(), RunsDir, "linked")))

	found, err := TempLeftovers(ws, time.Now().Add(-10*time.Minute))
	require.NoError(t, err)
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
	}
	assert.ElementsMatch(t, []string{filepath.Join(DirName, ".state.json123456789"), filepath.Join(DirName, RunsDir, "r1", ".summary.md1234567")}, paths)
	for _, f := range found {
		require.NoError(t, RemoveTempLeftover(ws, f))
	}
	assert.NoFileExists(t, filepath.Join(d.Path(), ".state.json123456789"))
	assert.FileExists(t, filepath.Join(d.Path(), "state.json"))
	assert.FileExists(t, filepath.Join(outside, ".x.json123456789"))
	assert.Error(t, RemoveTempLeftover(ws, TempLeftover{Path: filepath.Join(DirName, RunsDir, "linked", ".x.json123456789")}), "not through a link")
	assert.FileExists(t, filepath.Join(outside, ".x.json123456789"))
	assert.Error(t, RemoveTempLeftover(ws, TempLeftover{Path: filepath.Join(DirName, "..", "x.json123456789")}))
}

package runfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeRun writes a run's log (started and, unless ended is zero, ended
// at those times) and a raw output file in its directory.
func writeRun(t *testing.T, ws, stamp, id string, started, ended time.Time) {
	t.Helper()
	dir := filepath.Join(ws, DirName)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, RunsDir, id), 0o700))
	log := `{"ts":"` + started.Format(time.RFC3339Nano) + `","topic":"loop.started","payload":{"run_id":"` + id + `"},"source":"ralph"}` + "\n"
	if !ended.IsZero() {
		log += `{"ts":"` + ended.Format(time.RFC3339Nano) + `","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0,"iterations":2},"source":"ralph"}` + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events-"+stamp+".jsonl"), []byte(log), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsDir, id, RawOutput(1, 1)), []byte("0123456789"), 0o600))
}

// TestRunsOnDisk: a run's age runs from its loop.terminate line, not from
// its files' times; its size is its log and its directory; a run
// directory no log claims is listed too.
func TestRunsOnDisk(t *testing.T) {
	ws := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	writeRun(t, ws, "20261101-100000", "20261101-100000-aaaaaa", now.AddDate(0, 0, -27), now.AddDate(0, 0, -20))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, DirName, RunsDir, "orphan"), 0o700))
	old := now.AddDate(0, 0, -40)
	require.NoError(t, os.Chtimes(filepath.Join(ws, DirName, RunsDir, "orphan"), old, old))

	runs, err := RunsOnDisk(ws, now)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	r := runs[0]
	assert.Equal(t, "completed", r.Ended)
	assert.Equal(t, now.AddDate(0, 0, -20), r.LastActive.UTC(), "files written today, the run ended 20 days ago")
	assert.Equal(t, int64(20*24*3600), r.AgeSeconds)
	fi, err := os.Stat(filepath.Join(ws, r.Log))
	require.NoError(t, err)
	assert.Equal(t, fi.Size()+10, r.Bytes)
	assert.Equal(t, filepath.Join(DirName, RunsDir, "20261101-100000-aaaaaa"), r.Dir)
	assert.Equal(t, EndedNoLog, runs[1].Ended)
	assert.Equal(t, "orphan", runs[1].RunID)
	assert.Equal(t, old, runs[1].LastActive.UTC())
}

// TestCleanRuns removes the runs idle for longer than the limit, never the
// current one, and nothing on a dry run.
func TestCleanRuns(t *testing.T) {
	ws := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	writeRun(t, ws, "20261101-100000", "run-old", now.AddDate(0, 0, -27), now.AddDate(0, 0, -20))
	writeRun(t, ws, "20261102-100000", "run-current", now.AddDate(0, 0, -26), now.AddDate(0, 0, -19))
	writeRun(t, ws, "20261127-100000", "run-young", now.AddDate(0, 0, -1), now.Add(-time.Hour))
	require.NoError(t, os.WriteFile(filepath.Join(ws, DirName, CurrentEventsFile), []byte(".ralph/events-20261102-100000.jsonl\n"), 0o600))

	dry, err := CleanRuns(ws, 7*24*time.Hour, now, true)
	require.NoError(t, err)
	require.Len(t, dry.Removed, 1)
	assert.Equal(t, "run-old", dry.Removed[0].RunID)
	assert.DirExists(t, filepath.Join(ws, DirName, RunsDir, "run-old"), "a dry run removes nothing")

	done, err := CleanRuns(ws, 7*24*time.Hour, now, false)
	require.NoError(t, err)
	require.Len(t, done.Removed, 1)
	assert.Equal(t, dry.Removed[0].Bytes, done.Freed)
	require.Len(t, done.Kept, 1)
	assert.Equal(t, "run-current", done.Kept[0].RunID)
	assert.Equal(t, "the current run", done.Kept[0].Why)
	assert.NoDirExists(t, filepath.Join(ws, DirName, RunsDir, "run-old"))
	assert.NoFileExists(t, filepath.Join(ws, DirName, "events-20261101-100000.jsonl"))
	assert.DirExists(t, filepath.Join(ws, DirName, RunsDir, "run-current"))
	assert.DirExists(t, filepath.Join(ws, DirName, RunsDir, "run-young"))
}

// TestCleanRunsFollowsNoLink: links planted under .ralph/runs/ (a run's
// directory, a file in one, a run id that climbs out) are removed, never
// followed, and a .ralph/runs/ that is a link is refused: nothing outside
// .ralph/ is touched.
func TestCleanRunsFollowsNoLink(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ended := now.AddDate(0, 0, -20)
	victim := func(t *testing.T) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "precious"), []byte("keep me"), 0o600))
		return dir
	}

	t.Run("a run's directory", func(t *testing.T) {
		ws, outside := t.TempDir(), victim(t)
		writeRun(t, ws, "20261101-100000", "run-a", ended, ended)
		dir := filepath.Join(ws, DirName, RunsDir, "run-a")
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.Symlink(outside, dir))
		_, err := CleanRuns(ws, time.Hour, now, false)
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(outside, "precious"))
		_, err = os.Lstat(dir)
		assert.ErrorIs(t, err, os.ErrNotExist, "the link itself is gone")
	})
	t.Run("a file in a run's directory", func(t *testing.T) {
		ws, outside := t.TempDir(), victim(t)
		writeRun(t, ws, "20261101-100000", "run-a", ended, ended)
		require.NoError(t, os.Symlink(filepath.Join(outside, "precious"), filepath.Join(ws, DirName, RunsDir, "run-a", "iter-0002.jsonl")))
		require.NoError(t, os.Symlink(outside, filepath.Join(ws, DirName, RunsDir, "run-a", "prompts")))
		_, err := CleanRuns(ws, time.Hour, now, false)
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(outside, "precious"))
		assert.NoDirExists(t, filepath.Join(ws, DirName, RunsDir, "run-a"))
	})
	t.Run("a run id that climbs out", func(t *testing.T) {
		ws := t.TempDir()
		writeRun(t, ws, "20261101-100000", "run-a", ended, ended)
		outside := filepath.Join(ws, "src")
		require.NoError(t, os.MkdirAll(outside, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "precious"), []byte("keep me"), 0o600))
		// .ralph/runs/../../src is the workspace's src/.
		log := `{"ts":"` + ended.Format(time.RFC3339) + `","topic":"loop.started","payload":{"run_id":"../../src"},"source":"ralph"}` + "\n"
		climber := filepath.Join(ws, DirName, "events-20261102-100000.jsonl")
		require.NoError(t, os.WriteFile(climber, []byte(log), 0o600))
		// A log with no end ages from its last change: set it, so the run
		// is as old on any day the test runs.
		require.NoError(t, os.Chtimes(climber, ended, ended))
		done, err := CleanRuns(ws, time.Hour, now, false)
		require.NoError(t, err)
		assert.Len(t, done.Removed, 2, "both logs")
		assert.FileExists(t, filepath.Join(outside, "precious"))
	})
	t.Run("the runs directory", func(t *testing.T) {
		ws, outside := t.TempDir(), victim(t)
		require.NoError(t, os.MkdirAll(filepath.Join(outside, "run-a"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "run-a", "precious"), []byte("keep me"), 0o600))
		require.NoError(t, os.MkdirAll(filepath.Join(ws, DirName), 0o700))
		require.NoError(t, os.Symlink(outside, filepath.Join(ws, DirName, RunsDir)))
		log := `{"ts":"` + ended.Format(time.RFC3339) + `","topic":"loop.started","payload":{"run_id":"run-a"},"source":"ralph"}` + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(ws, DirName, "events-20261101-100000.jsonl"), []byte(log), 0o600))
		_, err := CleanRuns(ws, time.Hour, now, false)
		require.Error(t, err, "a link where .ralph/runs should be is refused")
		assert.FileExists(t, filepath.Join(outside, "run-a", "precious"))
		assert.FileExists(t, filepath.Join(outside, "precious"))
	})
}

// TestCleanRunsKeepsARunningRun: a run whose loop holds the lock is kept
// however long ago it was last active (a resumed one, archived by hand).
func TestCleanRunsKeepsARunningRun(t *testing.T) {
	ws := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	writeRun(t, ws, "20261101-100000", "run-old", now.AddDate(0, 0, -27), time.Time{})
	old := now.AddDate(0, 0, -20)
	require.NoError(t, os.Chtimes(filepath.Join(ws, DirName, "events-20261101-100000.jsonl"), old, old))
	lock, err := AcquireLock(t.Context(), In(ws).Lock(), LockInfo{RunID: "run-old", PID: os.Getpid()}, LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()

	done, err := CleanRuns(ws, time.Hour, now, false)
	require.NoError(t, err)
	assert.Empty(t, done.Removed)
	require.Len(t, done.Kept, 1)
	assert.Equal(t, "running", done.Kept[0].Why)
	assert.DirExists(t, filepath.Join(ws, DirName, RunsDir, "run-old"))
}

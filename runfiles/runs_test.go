package runfiles

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFindRun finds a run's log by its id, by a unique prefix of it, and
// through the checkpoint a later run archived; it names the runs a prefix
// fits when it fits several.
func TestFindRun(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, DirName)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, RunsDir, "20261122-100000-aaaaaa"), 0o755))
	logs := map[string]string{
		"events-20261122-100000.jsonl": "20261122-100000-aaaaaa",
		"events-20261122-110000.jsonl": "20261122-110000-bbbbbb",
		"events-20261122-110500.jsonl": "20261122-110500-cccccc",
	}
	for name, id := range logs {
		line := `{"ts":"2026-11-22T10:00:00Z","topic":"loop.started","payload":{"run_id":"` + id + `"},"source":"ralph"}` + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(line), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsDir, "20261122-100000-aaaaaa", StateFile),
		[]byte(`{"events_file":".ralph/events-20261122-100000.jsonl"}`), 0o644))

	path, err := FindRun(ws, "20261122-100000-aaaaaa")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "events-20261122-100000.jsonl"), path, "the archived checkpoint names it")
	path, err = FindRun(ws, "20261122-110500")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "events-20261122-110500.jsonl"), path, "a unique prefix")

	_, err = FindRun(ws, "20261122-11")
	var ambiguous *AmbiguousRunError
	require.ErrorAs(t, err, &ambiguous)
	assert.Equal(t, []string{"20261122-110000-bbbbbb", "20261122-110500-cccccc"}, ambiguous.Matches)
	_, err = FindRun(ws, "1999")
	var unknown *UnknownRunError
	require.ErrorAs(t, err, &unknown)
	assert.EqualError(t, err, `no run "1999" in `+dir)
}

// TestAwaitRun returns the log of a run that starts while it waits, and ""
// when it is cancelled first; waiting, it makes nothing in the workspace.
func TestAwaitRun(t *testing.T) {
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path, err := AwaitRun(ctx, ws, func() {})
	require.NoError(t, err)
	assert.Empty(t, path, "cancelled before any run started")
	assert.NoDirExists(t, filepath.Join(ws, DirName), "a reader makes no .ralph/")

	// .ralph/ appears while it waits, then the run's log in it.
	log := filepath.Join(ws, DirName, "events-20261122-100000.jsonl")
	path, err = AwaitRun(context.Background(), ws, func() {
		go func() {
			assert.NoError(t, os.Mkdir(filepath.Join(ws, DirName), 0o700))
			assert.NoError(t, os.WriteFile(log, nil, 0o644))
		}()
	})
	require.NoError(t, err)
	assert.Equal(t, log, path)
}

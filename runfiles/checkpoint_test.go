package runfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStaleTempFilesOfAtomicWritesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".state.json112773492084274147", ".current-events42", ".state.json.keep", "state.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	RemoveStaleTempFiles(dir, StateFile, CurrentEventsFile)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".state.json.keep", "state.json"}, names)
}

func TestEventLogsAreInTheOrderTheRunsStarted(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"events-20261122-100001.jsonl", "events-20261122-100000-2.jsonl",
		"events-20261122-100000.jsonl", "events-20261122-100000-10.jsonl", "events-20261122-100000-1.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	logs, err := EventLogs(dir)
	require.NoError(t, err)
	var names []string
	for _, l := range logs {
		names = append(names, filepath.Base(l))
	}
	assert.Equal(t, []string{"events-20261122-100000.jsonl", "events-20261122-100000-1.jsonl", "events-20261122-100000-2.jsonl",
		"events-20261122-100000-10.jsonl", "events-20261122-100001.jsonl"}, names)
}

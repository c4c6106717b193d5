package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// twoEndedRuns makes two runs in w with the scripted agent, ended as their
// clocks say: the first completed 30 days ago, the second stopped by
// max_iterations 20 days ago (and is the current run).
func twoEndedRuns(t *testing.T) *workspace {
	t.Helper()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n  max_iterations: 2\n  completion_confirmations: 1\n"+agentCLI())
	w.script(agentScript{Steps: []step{say("done " + tag("LOOP_COMPLETE", "all of it"))}})
	first := w.ralphEnv([]string{clockOffsetEnv + "=-720h"}, "loop")
	require.Equal(t, 0, first.code, first.stderr)
	w.script(agentScript{Steps: []step{say("still working")}})
	second := w.ralphEnv([]string{clockOffsetEnv + "=-480h"}, "loop", "--fresh")
	require.Equal(t, 2, second.code, second.stderr)
	return w
}

// runsJSONOf is what `ralph runs --json` lists in w.
func runsJSONOf(t *testing.T, w *workspace) []runfiles.RunOnDisk {
	t.Helper()
	r := w.ralph("runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []runfiles.RunOnDisk
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	return runs
}

// TestRunsListAndClean: `ralph runs` lists two runs with their endings,
// ages measured from their ends and sizes; `ralph runs clean --max-age`
// removes the one that ended longer ago, with its directory, and keeps
// the current run however old it is.
func TestRunsListAndClean(t *testing.T) {
	t.Parallel()
	w := twoEndedRuns(t)
	runs := runsJSONOf(t, w)
	require.Len(t, runs, 2)
	old, current := runs[0], runs[1]
	assert.Equal(t, "completed", old.Ended)
	assert.Equal(t, "max_iterations", current.Ended)
	assert.Equal(t, 2, current.Iterations)
	assert.True(t, current.Current)
	assert.InDelta(t, 30*24*3600, old.AgeSeconds, 600, "aged from its loop.terminate line, not from its files' times")
	assert.InDelta(t, 20*24*3600, current.AgeSeconds, 600)
	logInfo, err := os.Stat(filepath.Join(w.dir, old.Log))
	require.NoError(t, err)
	assert.Greater(t, old.Bytes, logInfo.Size(), "its log and its directory")
	require.NotEmpty(t, old.Dir)
	assert.DirExists(t, filepath.Join(w.dir, old.Dir))

	table := w.ralph("runs")
	require.Equal(t, 0, table.code, table.stderr)
	assert.Contains(t, table.stdout, old.RunID)
	assert.Contains(t, table.stdout, "completed (exit 0)")
	assert.Contains(t, table.stdout, "max_iterations (exit 2)")
	assert.Contains(t, table.stdout, "30d")
	assert.Contains(t, table.stdout, "2 runs, ")

	dry := w.ralph("runs", "clean", "--max-age", "7d", "--dry-run")
	require.Equal(t, 0, dry.code, dry.stderr)
	assert.Contains(t, dry.stdout, "would remove "+old.RunID+" (completed, ")
	assert.Contains(t, dry.stdout, "kept "+current.RunID+": the current run")
	assert.DirExists(t, filepath.Join(w.dir, old.Dir), "a dry run removes nothing")
	assert.FileExists(t, filepath.Join(w.dir, old.Log))

	young := w.ralph("runs", "clean", "--max-age", "25d")
	require.Equal(t, 0, young.code, young.stderr)
	assert.Contains(t, young.stdout, "removed 1 run idle for more than 25d")
	assert.NoDirExists(t, filepath.Join(w.dir, old.Dir))
	assert.NoFileExists(t, filepath.Join(w.dir, old.Log))
	assert.FileExists(t, filepath.Join(w.dir, current.Log), "20 days is not more than 25")

	clean := w.ralph("runs", "clean", "--max-age", "1d", "--json")
	require.Equal(t, 0, clean.code, clean.stderr)
	var done runfiles.RunsCleaned
	require.NoError(t, json.Unmarshal([]byte(clean.stdout), &done), clean.stdout)
	assert.Empty(t, done.Removed)
	require.Len(t, done.Kept, 1, "the current run is never removed")
	assert.Equal(t, current.RunID, done.Kept[0].RunID)

	runs = runsJSONOf(t, w)
	require.Len(t, runs, 1)
	assert.Equal(t, current.RunID, runs[0].RunID)
	resumed := w.ralph("loop", "--resume", "--max-iterations", "3")
	assert.Contains(t, resumed.stderr, "run "+current.RunID+" resumed", "the current run goes on")
}

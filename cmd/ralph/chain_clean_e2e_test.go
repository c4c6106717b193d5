package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestChainCleanRemovesOldChainsWithTheirStepsRuns: `ralph chain clean`
// refuses while a chain runs, removes a chain that ended with its steps'
// runs (which `ralph runs clean` keeps), and keeps one cut off unless
// forced.
func TestChainCleanRemovesOldChainsWithTheirStepsRuns(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, "")
	// The first chain completes; the second's fixer holds step 2 until it
	// is interrupted.
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": {w.fixerCompletes(), {Sh: `touch fixer-started`, SleepMS: 120000}},
	}})
	r := w.ralph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	require.Equal(t, 0, r.code, r.stderr)
	ended := latestChain(t, w)
	cmd, stderr := w.startRalph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	waitFor(t, "step 2's agent to start", func() bool {
		_, err := os.Stat(filepath.Join(w.dir, "fixer-started"))
		return err == nil
	})
	cut := latestChain(t, w).ID
	require.NotEqual(t, ended.ID, cut)
	r = w.ralph("chain", "clean", "--keep", "0")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "chain "+cut+" runs in this workspace")
	assert.DirExists(t, filepath.Join(w.dir, ".ralph", "chains", ended.ID), "refused: nothing removed")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, exitCodeOf(cmd.Wait()), stderr.String())

	r = w.ralph("chain", "clean")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "--max-age D, --keep N, or both")
	r = w.ralph("chain", "clean", "--max-age", "1d")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "removed 0 chains idle for more than 24h")

	r = w.ralph("chain", "clean", "--keep", "0", "--dry-run", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var dry chain.Cleaned
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &dry))
	require.Len(t, dry.Removed, 1)
	assert.Equal(t, ended.ID, dry.Removed[0].ID)
	require.Len(t, dry.Kept, 1)
	assert.Equal(t, cut, dry.Kept[0].ID)
	assert.Contains(t, dry.Kept[0].Why, "unfinished")
	assert.DirExists(t, filepath.Join(w.dir, ".ralph", "chains", ended.ID))

	r = w.ralph("chain", "clean", "--keep", "0")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "removed chain "+ended.ID+" (completed")
	assert.Contains(t, r.stdout, "kept chain "+cut+": unfinished")
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "chains", ended.ID))
	runs, err := runfiles.Runs(w.dir)
	require.NoError(t, err)
	for _, run := range runs {
		assert.Equal(t, cut, run.Chain, "only the cut-off chain's step runs are left")
	}

	r = w.ralph("chain", "clean", "--keep", "0", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "removed chain "+cut)
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "chains", cut))
	_, err = os.Stat(filepath.Join(w.dir, ".ralph", runfiles.CurrentChainFile))
	assert.ErrorIs(t, err, os.ErrNotExist, "it named a chain removed")
	r = w.ralph("chain", "resume")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "no chain to resume")
}

package chain_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
)

// savedChain saves chain run id with status, last changed at, and a step
// directory with a run's files in it.
func savedChain(t *testing.T, d runfiles.Dir, id string, status chain.Status, at time.Time, steps ...chain.StepRecord) {
	t.Helper()
	st := chain.NewState(id, chain.Plan{Steps: []chain.Step{{Preset: "tdd"}}}, at)
	st.Status, st.Steps = status, steps
	require.NoError(t, os.MkdirAll(d.ChainStep(id, 1).Run("r1"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(d.ChainStep(id, 1).Run("r1"), "iter-0001.jsonl"), []byte("{}\n"), 0o600))
	require.NoError(t, chain.Save(d, st, at))
}

func TestCleanRemovesOldChainsWithTheirStepsAndKeepsUnfinishedOnes(t *testing.T) {
	ws := t.TempDir()
	d := runfiles.In(ws)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	savedChain(t, d, "old-done", chain.Completed, now.Add(-40*24*time.Hour))
	savedChain(t, d, "old-cut", chain.Running, now.Add(-30*24*time.Hour))
	savedChain(t, d, "old-stopped-short", chain.Stopped, now.Add(-20*24*time.Hour), chain.StepRecord{N: 1, Status: chain.Stopped, Reason: "stopped", ExitCode: 1})
	savedChain(t, d, "new-stopped", chain.Stopped, now.Add(-time.Hour))
	// A link planted in a chain's directory is removed, never followed.
	outside := filepath.Join(t.TempDir(), "keep.txt")
	require.NoError(t, os.WriteFile(outside, []byte("mine"), 0o600))
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(d.Chain("old-done"), "step-1", "link")))
	}

	dry, err := chain.Clean(ws, chain.CleanOptions{MaxAge: 7 * 24 * time.Hour, DryRun: true, Now: now})
	require.NoError(t, err)
	require.Len(t, dry.Removed, 1)
	assert.Equal(t, "old-done", dry.Removed[0].ID)
	assert.Positive(t, dry.Freed)
	require.Len(t, dry.Kept, 2)
	assert.Equal(t, "old-stopped-short", dry.Kept[0].ID)
	assert.Contains(t, dry.Kept[0].Why, "stopped short at step 1")
	assert.Equal(t, "old-cut", dry.Kept[1].ID)
	assert.Contains(t, dry.Kept[1].Why, "unfinished")
	assert.DirExists(t, d.Chain("old-done"), "a dry run removes nothing")

	done, err := chain.Clean(ws, chain.CleanOptions{MaxAge: 7 * 24 * time.Hour, Now: now})
	require.NoError(t, err)
	require.Len(t, done.Removed, 1)
	assert.NoDirExists(t, d.Chain("old-done"))
	assert.FileExists(t, outside)
	assert.DirExists(t, d.Chain("old-cut"))
	assert.FileExists(t, d.CurrentChain(), "it names new-stopped, which stays")

	done, err = chain.Clean(ws, chain.CleanOptions{Keep: 0, Force: true, Now: now})
	require.NoError(t, err)
	assert.Len(t, done.Removed, 3, "forced, of any age: the unfinished ones too")
	assert.NoDirExists(t, d.Chain("old-cut"))
	assert.NoFileExists(t, d.CurrentChain(), "it named a chain removed")
}

func TestCleanKeepsTheLatestChains(t *testing.T) {
	ws := t.TempDir()
	d := runfiles.In(ws)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "c"} {
		savedChain(t, d, id, chain.Completed, now.Add(-time.Duration(3-i)*time.Hour))
	}
	done, err := chain.Clean(ws, chain.CleanOptions{Keep: 2, Now: now})
	require.NoError(t, err)
	require.Len(t, done.Removed, 1)
	assert.Equal(t, "a", done.Removed[0].ID, "the oldest")
	assert.DirExists(t, d.Chain("b"))
	assert.DirExists(t, d.Chain("c"))
}

func TestCleanKeepsAChainWhoseStepsLoopRunsOrWhoseStateCannotBeRead(t *testing.T) {
	ws := t.TempDir()
	d := runfiles.In(ws)
	now := time.Now()
	savedChain(t, d, "busy", chain.Completed, now.Add(-48*time.Hour))
	lock, err := runfiles.AcquireLock(t.Context(), d.ChainStep("busy", 1).Lock(), runfiles.LockInfo{RunID: "r1", PID: os.Getpid(), StartedAt: now}, runfiles.LockOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Release() })
	require.NoError(t, os.MkdirAll(d.Chain("broken"), 0o700))
	require.NoError(t, os.WriteFile(d.ChainState("broken"), []byte("{"), 0o600))

	done, err := chain.Clean(ws, chain.CleanOptions{Force: true, Now: now.Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, done.Removed)
	require.Len(t, done.Kept, 2)
	why := map[string]string{done.Kept[0].ID: done.Kept[0].Why, done.Kept[1].ID: done.Kept[1].Why}
	assert.Equal(t, "a step's loop runs", why["busy"])
	assert.Contains(t, why["broken"], "chain.json cannot be read")
}

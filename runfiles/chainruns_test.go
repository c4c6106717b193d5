package runfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChainStepDirsListsRealStepDirectoriesOnly(t *testing.T) {
	ws := t.TempDir()
	d := In(ws)
	for _, dir := range []string{d.ChainStep("c1", 2).Path(), d.ChainStep("c1", 10).Path(), d.ChainStep("c1", 1).Path(),
		filepath.Join(d.Chain("c1"), "step-01"), filepath.Join(d.Chain("c1"), "step-x"), filepath.Join(d.Chain("c1"), "runs")} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
	}
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(d.Chain("c1"), "step-3")))
	require.NoError(t, os.Symlink(d.Chain("c1"), d.Chain("c2")))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), ChainsDir, ChainLockFile), nil, 0o600))

	steps, err := ChainStepDirs(ws)
	require.NoError(t, err)
	var got []int
	for _, s := range steps {
		assert.Equal(t, "c1", s.Chain)
		got = append(got, s.Step)
		back, ok := ChainStepOf(s.Dir)
		require.True(t, ok)
		assert.Equal(t, s, back)
	}
	assert.Equal(t, []int{1, 2, 10}, got, "by number; no link, no step-01")
	_, ok := ChainStepOf(d)
	assert.False(t, ok, "the workspace's own .ralph is no step")

	none, err := ChainStepDirs(t.TempDir())
	require.NoError(t, err)
	assert.Empty(t, none)
}

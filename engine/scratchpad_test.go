package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// The scratchpad is the notes of one run: a resumed run keeps it, a new run
// starts without it and the old one is kept with the run it belongs to.
func TestScratchpadBelongsToItsRun(t *testing.T) {
	dir := t.TempDir()
	pad := filepath.Join(dir, runfiles.DirName, "agent", runfiles.ScratchpadFile)
	write := func(text string) func() {
		return func() {
			require.NoError(t, os.MkdirAll(filepath.Dir(pad), 0o755))
			require.NoError(t, os.WriteFile(pad, []byte(text), 0o644))
		}
	}
	s := settings()
	s.MaxIterations = 1
	first := &fakeBackend{turns: []turn{{onStart: write("next: step 3 of the old objective"), text: tagged("build.task", "go on")}}}
	out, err := newTestEngine(t, dir, first, s).Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, runfiles.ReasonMaxIterations, out.Reason)
	oldRun := out.RunID

	s.MaxIterations = 2
	resumed := &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}}}
	_, err = newTestEngine(t, dir, resumed, s, func(o *Options) { o.Start = runfiles.StartResume }).Run(t.Context())
	require.NoError(t, err)
	assert.Contains(t, resumed.prompts[0], "next: step 3 of the old objective", "a resumed run keeps its notes")

	fresh := &fakeBackend{turns: []turn{{text: tagged("LOOP_COMPLETE", "done")}}}
	_, err = newTestEngine(t, dir, fresh, s).Run(t.Context())
	require.NoError(t, err)
	assert.NotContains(t, fresh.prompts[0], "step 3 of the old objective", "a new run starts without the old notes")
	assert.NoFileExists(t, pad)
	kept, err := os.ReadFile(filepath.Join(dir, runfiles.DirName, runfiles.RunsDir, oldRun, runfiles.ScratchpadFile))
	require.NoError(t, err)
	assert.Equal(t, "next: step 3 of the old objective", string(kept))
}

package view_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

func TestChainHereIsTheLatestOfTheChainAndTheWorkspacesOwnLoop(t *testing.T) {
	ws := t.TempDir()
	d := runfiles.In(ws)
	_, _, ok := view.ChainHere(ws)
	assert.False(t, ok, "no chain ran here")

	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	plan := chain.Plan{Name: "review-then-fix", Steps: []chain.Step{{Preset: "review"}, {Preset: "tdd"}, {Config: "docs.yml"}}}
	st := chain.NewState("review-then-fix-1", plan, t0)
	st.Steps = []chain.StepRecord{{N: 1, Status: chain.Completed}, {N: 2, Status: chain.Running}}
	st.Current = 2
	require.NoError(t, chain.Save(d, st, t0))

	place, step, ok := view.ChainHere(ws)
	require.True(t, ok, "the chain ran and the workspace's own loop never did")
	assert.Equal(t, d.ChainStep(st.ID, 2), step)
	assert.Equal(t, runfiles.ChainPlace{ID: st.ID, Name: "review-then-fix", Step: 2, Steps: 3, Label: "tdd", Status: "running",
		Where: "chain review-then-fix: step 2/3 (tdd)"}, *place)

	// A loop of the workspace's own, started after the chain last moved,
	// is what runs here now.
	own := runfiles.NewRunState()
	own.RunID, own.EventsFile, own.StartedAt = "own", ".ralph/events-1.jsonl", t0.Add(time.Minute)
	require.NoError(t, os.MkdirAll(d.Path(), 0o700))
	require.NoError(t, runfiles.Checkpoint{Path: d.State()}.Save(own, runfiles.PhaseDone, t0))
	_, _, ok = view.ChainHere(ws)
	assert.False(t, ok)

	// A chain that moved after it is again.
	require.NoError(t, chain.Save(d, st, t0.Add(2*time.Minute)))
	_, _, ok = view.ChainHere(ws)
	assert.True(t, ok)
}

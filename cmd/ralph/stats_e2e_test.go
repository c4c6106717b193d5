package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/view"
)

// TestStatsCountsTwoRuns: `ralph stats` counts a completed run and one
// stopped by max_iterations, in all, for their config and for the hat that
// worked in both; --since leaves out the one that started before.
func TestStatsCountsTwoRuns(t *testing.T) {
	t.Parallel()
	w := twoEndedRuns(t)

	r := w.ralph("stats", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st view.Stats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	assert.Equal(t, 2, st.Total.Runs)
	assert.Equal(t, map[string]int{"completed": 1, "max_iterations": 1}, st.Total.Endings)
	require.NotNil(t, st.Total.SuccessRate)
	assert.InDelta(t, 0.5, *st.Total.SuccessRate, 1e-9)
	assert.Equal(t, 3, st.Total.Iterations, "one, then two")
	assert.Equal(t, 3, st.Total.CostUnknownIterations, "the scripted agent reports no cost, and its model has no price")
	assert.Zero(t, st.Total.CostUSD)
	require.Len(t, st.Configs, 1)
	assert.Equal(t, "ralph.yml", st.Configs[0].Name)
	assert.Equal(t, st.Total.Endings, st.Configs[0].Endings)
	require.Len(t, st.Hats, 1)
	assert.Equal(t, "ralph", st.Hats[0].Name, "the coordinator hat did the work")
	assert.Equal(t, 2, st.Hats[0].Runs)
	assert.Equal(t, 3, st.Hats[0].Iterations)

	text := w.ralph("stats")
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "2 runs: completed 1, max_iterations 1; 3 iterations")
	assert.Contains(t, text.stdout, "unknown (3 iterations)")
	assert.Regexp(t, `(?m)^ralph\.yml +2 +50% +3 `, text.stdout)
	assert.Regexp(t, `(?m)^ralph +2 +50% +3 `, text.stdout)

	recent := w.ralph("stats", "--since", "25d", "--json")
	require.Equal(t, 0, recent.code, recent.stderr)
	st = view.Stats{}
	require.NoError(t, json.Unmarshal([]byte(recent.stdout), &st))
	assert.Equal(t, map[string]int{"max_iterations": 1}, st.Total.Endings, "the first run started 30 days ago")

	bad := w.ralph("stats", "--since", "last tuesday")
	assert.Equal(t, 3, bad.code)
	assert.Contains(t, bad.stderr, `--since "last tuesday" is neither a duration nor a time`)
	assert.Contains(t, bad.stderr, "ralph: hint: use a duration (10m, 1h30m, 7d)")
}

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/examples"
)

// Every preset passes ralph validate, by name with -H and as the ralph.yml
// ralph init writes.
func TestValidatePresets(t *testing.T) {
	t.Parallel()
	for _, name := range examples.Names() {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("PROMPT.md", "Do the thing.\n")
			r := w.ralph("validate", "-H", name)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.Contains(t, r.stdout, "preset:"+name+": ok (")

			r = w.ralph("init", "--preset", name)
			require.Equal(t, 0, r.code, r.stderr)
			r = w.ralph("validate")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
		})
	}
}

// A cost pacing budget cannot pace a backend whose cost ralph cannot know:
// validate says so, and which key to set, as it does for max_cost_usd.
func TestValidateWarnsOfCostBudgetsWithoutPrices(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do the thing.\n  tokens_per_hour: 100000\n  cost_per_hour: 2\n  cost_per_day: 20\n"+
		"cli:\n  backend: pi\n  model: mystery-model\n")
	r := w.ralph("validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cost_per_hour and cost_per_day cannot be enforced for backend pi: ralph has no price for model mystery-model; "+
		"set pricing: {mystery-model: {input: …, output: …}}")

	w.write("ralph.yml", "event_loop:\n  prompt: Do the thing.\n  tokens_per_hour: 100000\ncli:\n  backend: pi\n  model: mystery-model\n")
	r = w.ralph("validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "cannot be enforced", "a token budget needs no price")
}

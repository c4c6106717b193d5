package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestChainsLoadWithTheirPlaces(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(`cli:
  backend: claude
chains:
  review-then-fix:
    steps:
      - review
      - {preset: tdd, prompt: fix what the review found}
      - config: steps/docs.yml
    budget: {max_steps: 3, max_runtime_seconds: 600, max_cost_usd: 2.5, max_tokens: 100000}
  quick:
    steps: [tdd]
`))
	require.NoError(t, err)
	require.Equal(t, []string{"review-then-fix", "quick"}, c.ChainNames())
	ch, ok := c.Chain("review-then-fix")
	require.True(t, ok)
	assert.Equal(t, []config.ChainStep{
		{Name: "review", File: "ralph.yml", Line: 6},
		{Preset: "tdd", Prompt: "fix what the review found", File: "ralph.yml", Line: 7},
		{Config: "steps/docs.yml", File: "ralph.yml", Line: 8},
	}, ch.Steps)
	assert.Equal(t, config.ChainBudget{MaxSteps: 3, MaxRuntimeSeconds: 600, MaxCostUSD: 2.5, MaxTokens: 100000}, ch.Budget)
	assert.Equal(t, 4, ch.Line)
	_, ok = c.Chain("nope")
	assert.False(t, ok)
}

func TestChainProblemsHaveFileAndLine(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", []byte(`chains:
  empty: {steps: []}
  nosteps: {budget: {max_steps: 2}}
  zero:
    steps: [tdd]
    budget: {max_cost_usd: 0, max_steps: -1, max_tokens: lots, max_runtme_seconds: 5}
  both:
    steps: [{preset: tdd, config: x.yml}]
`))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"ralph.yml:2", "chains.empty: a chain without steps",
		"ralph.yml:3", "chains.nosteps: a chain without steps",
		"ralph.yml:6", "chains.zero.budget.max_cost_usd must be positive, got 0",
		"chains.zero.budget.max_steps must be positive, got -1",
		"chains.zero.budget.max_tokens: expected an integer",
		`did you mean "max_runtime_seconds"?`,
		"ralph.yml:8", "chains.both.steps[0]: a step needs exactly one of preset and config",
	} {
		assert.Contains(t, msg, want)
	}
}

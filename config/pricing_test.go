package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/pricing"
)

func TestPricingLoadsWithItsSource(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(`cli:
  backend: pi
pricing:
  fake-model: {input: 3.0, output: 15}
  claude-opus-4.8:
    input: 1
    output: 2
    cache_read: 0.1
    cache_write: 1.25
  copilot: {per_request: 0.05}
`))
	require.NoError(t, err)
	assert.Equal(t, []pricing.Price{
		{Model: "fake-model", Input: 3, Output: 15, Source: "config ralph.yml:4"},
		{Model: "claude-opus-4.8", Input: 1, Output: 2, CacheRead: 0.1, CacheWrite: 1.25, Source: "config ralph.yml:5"},
		{Model: "copilot", PerRequest: 0.05, Source: "config ralph.yml:10"},
	}, c.Pricing)

	table := pricing.Default().With(c.Pricing)
	p, ok := table.Lookup("claude-opus-4-8[1m]")
	require.True(t, ok)
	assert.Equal(t, "config ralph.yml:5", p.Source, "the override replaces the embedded row")
	p, ok = table.Lookup("fake/fake-model")
	require.True(t, ok)
	assert.InDelta(t, 3.0, p.Input, 1e-12)
}

func TestNoPricingSectionAddsNothing(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("cli:\n  backend: codex\n"))
	require.NoError(t, err)
	assert.Empty(t, c.Pricing)
}

func TestPricingProblemsHaveFileAndLine(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", []byte(`pricing:
  a: {input: -1, output: 2}
  b: {input: 1}
  c: {input: 1, output: 2, cache_reed: 0.1}
  d: {input: "cheap", output: 2}
  e: 3
  f: {}
`))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"ralph.yml:2: pricing.a.input must not be negative, got -1",
		"ralph.yml:3: pricing.b: input and output are required",
		`ralph.yml:4: unknown key "cache_reed" in pricing.c; did you mean "cache_read"?`,
		"ralph.yml:5: pricing.d.input: expected a number",
		"ralph.yml:6: pricing.e: expected a mapping of prices, got",
		"ralph.yml:7: pricing.f: input and output are required",
	} {
		assert.Contains(t, msg, want)
	}

	_, err = config.LoadBytes("ralph.yml", []byte("pricing: [gpt-5.5]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ralph.yml:1: pricing: expected a mapping of model names to prices")
}

// With several files, a later file's model replaces the earlier one's key by
// key, and each price names the file that wrote it.
func TestPricingMergesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	base, local := filepath.Join(dir, "ralph.yml"), filepath.Join(dir, "local.yml")
	require.NoError(t, os.WriteFile(base, []byte("pricing:\n  a: {input: 1, output: 2}\n  b: {input: 3, output: 4}\n"), 0o644))
	require.NoError(t, os.WriteFile(local, []byte("pricing:\n  b: {input: 5, output: 6}\n  c: {per_request: 0.1}\n"), 0o644))
	c, err := config.Load(base, local)
	require.NoError(t, err)
	require.Len(t, c.Pricing, 3)
	assert.Equal(t, pricing.Price{Model: "a", Input: 1, Output: 2, Source: "config " + base + ":2"}, c.Pricing[0])
	assert.InDelta(t, 5.0, c.Pricing[1].Input, 1e-12)
	assert.Equal(t, "config "+local+":2", c.Pricing[1].Source)
	assert.Equal(t, "c", c.Pricing[2].Model)
}

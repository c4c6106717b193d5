package pricing

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestDefaultParses(t *testing.T) {
	rows, err := parseCSV(embedded)
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	assert.Equal(t, rows, Default().All())
}

func TestEveryRowSaysWhenAndWhere(t *testing.T) {
	for _, p := range Default().All() {
		assert.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, p.AsOf, p.Model)
		assert.Regexp(t, `^https://`, p.Source, p.Model)
		if p.PerRequest == 0 {
			assert.Positive(t, p.Input, p.Model)
			assert.Positive(t, p.Output, p.Model)
		}
	}
}

func TestLookupNormalizesNames(t *testing.T) {
	for _, name := range []string{
		"claude-opus-4-8",
		"claude-opus-4-8[1m]", // Claude Code's 1M-context variant
		"Claude-Opus-4-8",     // case
		" claude-opus-4-8 ",   // surrounding space
		"anthropic/claude-opus-4-8",
		"openrouter/anthropic/claude-opus-4.8", // OpenRouter spells versions with a dot
		"claude-opus-4-8-20261001",             // dated snapshot
		"claude-opus-4-8@20261001",             // Vertex AI's dated snapshot
		"claude-opus-4-8-2026-10-01",
	} {
		p, ok := Default().Lookup(name)
		if assert.True(t, ok, name) {
			assert.Equal(t, "claude-opus-4-8", p.Model, name)
		}
	}
	p, ok := Default().Lookup("openai/gpt-5.5")
	require.True(t, ok)
	assert.Equal(t, "gpt-5.5", p.Model)
}

func TestLookupNeverGuesses(t *testing.T) {
	for _, name := range []string{"", "claude-opus", "claude", "gpt-5.6", "gpt", "gemini-3-flash", "gemini-3.8", "opus-4-8", "claude-opus-4-8-fast", "fake-model", "fake/fake-model", "gpt-5.5x"} {
		_, ok := Default().Lookup(name)
		assert.False(t, ok, "%q has no row of its own", name)
	}
}

// Every model the captured agent runs asked the model server for
// (backends/testdata/*/*.requests.jsonl, copies of ../shared/fixtures/agents;
// Claude Code's, whose request logs are not kept, names it in its stream) has
// a price, but the scripted server's own fake-model, which has none, and the
// "<synthetic>" Claude Code names on a message it made up itself (the API
// error's).
func TestFixtureModelsArePriced(t *testing.T) {
	logs, err := filepath.Glob("../backends/testdata/*/*.requests.jsonl")
	require.NoError(t, err)
	claude, err := filepath.Glob("../backends/testdata/claude/stream-json-*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	require.NotEmpty(t, claude)
	modelField := regexp.MustCompile(`"model": ?"([^"]+)"`)
	requested := map[string]bool{}
	for _, name := range append(logs, claude...) {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, m := range modelField.FindAllSubmatch(data, -1) {
			requested[string(m[1])] = true
		}
	}
	for _, want := range []string{"claude-opus-4-8", "claude-opus-4-8[1m]", "gpt-5.5", "gemini-3.8-flash", "gemini-3.5-flash-lite", "fake-model"} {
		assert.True(t, requested[want], "the fixtures ask for %s", want)
	}
	for model := range requested {
		_, ok := Default().Lookup(model)
		assert.Equal(t, model != "fake-model" && model != "<synthetic>", ok, model)
	}
}

func TestWithReplacesAndAdds(t *testing.T) {
	base := Default()
	before := base.All()
	got := base.With([]Price{
		{Model: "Claude-Opus-4.8", Input: 1, Output: 2, Source: "config ralph.yml:3"},
		{Model: "fake-model", Input: 0.5, Output: 1, Source: "config ralph.yml:5"},
	})

	p, ok := got.Lookup("claude-opus-4-8[1m]")
	require.True(t, ok)
	assert.Equal(t, Price{Model: "Claude-Opus-4.8", Input: 1, Output: 2, Source: "config ralph.yml:3"}, p)
	p, ok = got.Lookup("fake/fake-model")
	require.True(t, ok)
	assert.Equal(t, "config ralph.yml:5", p.Source)

	all := got.All()
	require.Len(t, all, len(before)+1, "the override replaces its row; the new model is added")
	assert.Equal(t, "fake-model", all[len(all)-1].Model)
	assert.Equal(t, before, base.All(), "the table With was called on is unchanged")
	_, ok = base.Lookup("fake-model")
	assert.False(t, ok)
}

func TestZeroTable(t *testing.T) {
	var nilTable *Table
	_, ok := nilTable.Lookup("gpt-5.5")
	assert.False(t, ok)
	assert.Empty(t, (&Table{}).All())
	p, ok := nilTable.With([]Price{{Model: "m", Input: 1, Output: 1}}).Lookup("M")
	assert.True(t, ok)
	assert.Equal(t, "m", p.Model)
}

func TestCost(t *testing.T) {
	p := Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}
	u := events.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 400_000}
	// 5 + 2.5 + 1 + 2.5
	assert.InDelta(t, 11.0, p.Cost(u, 0), 1e-9)
	assert.InDelta(t, 11.0, p.Cost(u, 3), 1e-9, "requests cost nothing without a per-request price")
	assert.Zero(t, p.Cost(events.Usage{}, 0))
}

// Claude Code prices its own runs; the table gives the same figure for the
// captured run (claude/stream-json-tool-loop.jsonl: 57,407 input and 58
// output tokens of claude-opus-4-8[1m], total_cost_usd 0.288485).
func TestCostMatchesClaudeCodesOwn(t *testing.T) {
	p, ok := Default().Lookup("claude-opus-4-8[1m]")
	require.True(t, ok)
	assert.InDelta(t, 0.288485, p.Cost(events.Usage{InputTokens: 57407, OutputTokens: 58}, 1), 1e-9)
}

func TestCostWithoutCachePricesChargesCacheAsInput(t *testing.T) {
	p := Price{Input: 2, Output: 8}
	u := events.Usage{CacheReadTokens: 500_000, CacheWriteTokens: 500_000}
	assert.InDelta(t, 2.0, p.Cost(u, 0), 1e-9)
}

func TestCostPerRequest(t *testing.T) {
	p, ok := Default().Lookup("copilot")
	require.True(t, ok)
	assert.InDelta(t, 3*p.PerRequest, p.Cost(events.Usage{InputTokens: 1000}, 3), 1e-12)
}

func TestParseCSVRejectsBadRows(t *testing.T) {
	header := "model,input,output,cache_read,cache_write,per_request,as_of,source\n"
	for name, body := range map[string]string{
		"negative":         "m,-1,2,,,,2026-01-01,https://x\n",
		"not a number":     "m,one,2,,,,2026-01-01,https://x\n",
		"no as_of":         "m,1,2,,,,,https://x\n",
		"same model twice": "m-1,1,2,,,,2026-01-01,https://x\nM.1,1,2,,,,2026-01-01,https://x\n",
	} {
		_, err := parseCSV([]byte(header + body))
		assert.Error(t, err, name)
	}
	_, err := parseCSV([]byte("model,input\n"))
	assert.Error(t, err)
}

func TestNearest(t *testing.T) {
	table := Default()
	assert.Equal(t, []string{"claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6"}, table.Nearest("claude-opus-4-9", 3))
	assert.Equal(t, "gemini-3.8-flash", table.Nearest("gemni-3.8-flash", 3)[0], "a typo comes first")
	assert.Equal(t, []string{"qwen3-coder-plus", "qwen3-coder-flash"}, table.Nearest("qwen3-coder-next", 2))
	assert.Empty(t, table.Nearest("fake-model", 3))
	assert.Empty(t, table.Nearest("", 3))
}

package backends

// The model each CLI's own output names, which the engine prices an
// iteration by, and the input tokens every parser reports without the
// cached part, so one price formula fits them all. The expected models are
// those the recordings' request logs show the fake server was asked for.

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/pricing"
)

func parseRecorded(t *testing.T, cli, file string) events.AgentResult {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", cli, file))
	require.NoError(t, err)
	defer f.Close()
	return clis[cli].parse(f, func(events.Activity) {}, parseEnv{now: func() time.Time { return time.Unix(1795312500, 0) }})
}

func TestParsersNameTheModel(t *testing.T) {
	cases := []struct {
		cli, file, model string
	}{
		// The assistant messages' model; init's "claude-opus-4-8[1m]" only
		// names the context window.
		{"claude", "stream-json-tool-loop.jsonl", "claude-opus-4-8"},
		{"claude", "stream-json-tool-error.jsonl", "claude-opus-4-8"},
		// The only assistant message is Claude Code's own "<synthetic>"
		// error: init's model stands.
		{"claude", "stream-json-api-error-400.jsonl", "claude-opus-4-8[1m]"},
		// init says "auto"; the router's side request ran on
		// gemini-3.5-flash-lite, the turns on gemini-3.8-flash.
		{"gemini", "stream-json-tool-loop.jsonl", "gemini-3.8-flash"},
		{"gemini", "stream-json-tool-error.jsonl", "gemini-3.8-flash"},
		{"pi", "mode-json-tool-loop.jsonl", "fake-model"},
		{"qwen", "stream-json-tool-loop.jsonl", "fake-model"},
		{"copilot", "output-json-tool-loop.jsonl", "fake-model"},
		// codex and opencode do not name the model in their output: the
		// engine falls back to the configured one.
		{"codex", "exec-json-tool-loop.jsonl", ""},
		{"opencode", "run-json-tool-loop.jsonl", ""},
	}
	for _, c := range cases {
		t.Run(c.cli+"/"+c.file, func(t *testing.T) {
			assert.Equal(t, c.model, parseRecorded(t, c.cli, c.file).Model)
		})
	}
}

func TestGeminiMainModelIsTheBusiestThenByName(t *testing.T) {
	models := map[string]geminiModelStats{"b": {TotalTokens: 5}, "a": {TotalTokens: 5}, "c": {TotalTokens: 1}}
	for range 20 { // map order must not matter
		assert.Equal(t, "a", geminiMainModel(models, ""))
	}
	assert.Equal(t, "kept", geminiMainModel(nil, "kept"))
}

func TestCopilotCountsPremiumRequests(t *testing.T) {
	parse := func(result string) events.AgentResult {
		return parseCopilot(strings.NewReader(result+"\n"), func(events.Activity) {}, parseEnv{now: time.Now})
	}
	assert.Zero(t, parseRecorded(t, "copilot", "output-json-tool-loop.jsonl").Requests, "a BYOK session bills no premium requests")
	assert.Equal(t, 3, parse(`{"type":"result","exitCode":0,"usage":{"premiumRequests":3}}`).Requests)
	assert.Equal(t, 1, parse(`{"type":"result","exitCode":0,"usage":{"premiumRequests":0.33}}`).Requests,
		"a fraction of a request is billed, so it is not rounded away")
}

// TestInputTokensExcludeCache holds every parser whose CLI counts cached
// tokens inside its input figure to moving them out, and the others to
// leaving their figures alone.
func TestInputTokensExcludeCache(t *testing.T) {
	cases := []struct {
		cli, line string
		want      events.Usage
	}{
		{"claude", `{"type":"result","result":"ok","usage":{"input_tokens":100,"output_tokens":5,"cache_read_input_tokens":400,"cache_creation_input_tokens":50}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400, CacheWriteTokens: 50}},
		{"codex", `{"type":"turn.completed","usage":{"input_tokens":500,"cached_input_tokens":400,"output_tokens":5}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400}},
		{"gemini", `{"type":"result","status":"success","stats":{"input_tokens":500,"output_tokens":5,"cached":400}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400}},
		{"qwen", `{"type":"result","subtype":"success","result":"ok","usage":{"input_tokens":500,"output_tokens":5,"cache_read_input_tokens":400}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400}},
		{"opencode", `{"type":"step_finish","part":{"tokens":{"input":100,"output":5,"cache":{"read":400,"write":50}}}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400, CacheWriteTokens: 50}},
		{"pi", `{"type":"message_end","message":{"role":"assistant","content":[],"usage":{"input":100,"output":5,"cacheRead":400,"cacheWrite":50}}}`,
			events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 400, CacheWriteTokens: 50}},
	}
	for _, c := range cases {
		t.Run(c.cli, func(t *testing.T) {
			res := clis[c.cli].parse(strings.NewReader(c.line+"\n"), func(events.Activity) {}, parseEnv{now: time.Now})
			assert.Equal(t, c.want, res.Usage)
		})
	}
}

// TestConfiguredModel: cli.model wins; codex, whose output names no model,
// falls back to the top-level model of $CODEX_HOME/config.toml.
func TestConfiguredModel(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"),
		[]byte("# mine\nmodel = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nmodel = \"not-this\"\n"), 0o644))
	newBackend := func(o Options) *Backend {
		b, err := New(o)
		require.NoError(t, err)
		return b
	}
	env := map[string]string{"CODEX_HOME": home}
	assert.Equal(t, "gpt-5.5", newBackend(Options{Name: "codex", Env: env}).ConfiguredModel())
	assert.Equal(t, "o4-mini", newBackend(Options{Name: "codex", Env: env, Model: "o4-mini"}).ConfiguredModel())
	assert.Empty(t, newBackend(Options{Name: "codex", Env: map[string]string{"CODEX_HOME": t.TempDir()}}).ConfiguredModel())

	tableOnly := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tableOnly, "config.toml"), []byte("[profiles.x]\nmodel = \"gpt-5\"\n"), 0o644))
	assert.Empty(t, newBackend(Options{Name: "codex", Env: map[string]string{"CODEX_HOME": tableOnly}}).ConfiguredModel(),
		"a profile's model is not the default")

	claude := newBackend(Options{Name: "claude", Model: "claude-opus-4-8"})
	assert.Equal(t, "claude-opus-4-8", claude.ConfiguredModel())
	assert.True(t, claude.ReportsCost())
	assert.True(t, claude.NamesModel())
	codex := newBackend(Options{Name: "codex"})
	assert.False(t, codex.ReportsCost())
	assert.False(t, codex.NamesModel())
}

// TestRecordedRunsPricedAtTheTable holds the cost ralph computes for each
// recorded run (its tokens at the price table's figures for its model) to
// the figures worked out by hand. Claude Code, which reports its own cost,
// is the check on the table: priced by it, its run costs what it said.
func TestRecordedRunsPricedAtTheTable(t *testing.T) {
	cases := []struct {
		cli, file, model string
		want             float64
		why              string
	}{
		{"claude", "stream-json-tool-loop.jsonl", "claude-opus-4-8", 0.288485,
			"57,407 in at $5/M + 58 out at $25/M, what Claude Code reported"},
		{"codex", "exec-json-tool-loop.jsonl", "gpt-5.5", 0.146655,
			"gpt-5.5 from the recording's config.toml (its output names none): 28,995 in at $5/M + 56 out at $30/M"},
		{"gemini", "stream-json-tool-loop.jsonl", "gemini-3.8-flash", 0.02712525,
			"35,842 in at $0.75/M + 65 out at $3.75/M: every token at the main model's price, the router's side request included"},
	}
	for _, c := range cases {
		t.Run(c.cli, func(t *testing.T) {
			res := parseRecorded(t, c.cli, c.file)
			model := cmp.Or(res.Model, c.model)
			assert.Equal(t, c.model, model)
			p, ok := pricing.Default().Lookup(model)
			require.True(t, ok, "the table prices %s", model)
			assert.InDelta(t, c.want, p.Cost(res.Usage, res.Requests), 1e-9, c.why)
			if c.cli == "claude" {
				assert.InDelta(t, res.CostUSD, p.Cost(res.Usage, 0), 1e-9, "the table agrees with Claude Code's own cost")
			}
			t.Logf("%s %s: %+v → $%.6f", c.cli, model, res.Usage, p.Cost(res.Usage, res.Requests))
		})
	}
	for _, cli := range []string{"pi", "qwen", "copilot"} {
		_, ok := pricing.Default().Lookup(parseRecorded(t, cli, map[string]string{
			"pi": "mode-json-tool-loop.jsonl", "qwen": "stream-json-tool-loop.jsonl", "copilot": "output-json-tool-loop.jsonl"}[cli]).Model)
		assert.False(t, ok, "%s: the scripted model has no public price", cli)
	}
}

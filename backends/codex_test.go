package backends

// testdata/codex/exec-json-{tool-loop,tool-error,api-error-400}.jsonl were
// captured with (backends/testdata/README.md#recording):
//
//	CODEX_HOME=$HOME/.codex FAKE_API_KEY=sk-test \
//	codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox PROMPT </dev/null
//
// (@openai/codex 0.169.0; config.toml model "gpt-5.5", a "fake" provider
// with wire_api "responses"). Exit statuses: 0, 0, 1.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["codex"] = conformanceCase{
		Normal:       "codex/exec-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "codex/exec-json-api-error-400.jsonl",
		ErrorStderr:  "codex/exec-json-api-error-400.stderr.txt",
		ErrorExit:    1,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParseCodex(t *testing.T) {
	runParserCases(t, parseCodex, map[string]parserCase{
		"tool loop: apply_patch write, shell append, final message": {
			file:  "codex/exec-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			usage: events.Usage{InputTokens: 28995, OutputTokens: 56},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "file_change", path: "/workspace/hello.txt"},
				{kind: events.ToolShell, name: "command_execution", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: a failing command is only a tool use": {
			file:     "codex/exec-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			usage:    events.Usage{InputTokens: 19159, OutputTokens: 25},
			toolActs: []toolAct{{kind: events.ToolShell, name: "command_execution", command: "cat does-not-exist.txt"}},
		},
		"API error 400: error and turn.failed lines": {
			file:       "codex/exec-json-api-error-400.jsonl",
			failure:    events.FailureAgent,
			messageHas: "codex reported an error: {\"error\": {\"message\": \"fakemodel scripted failure\"",
		},
		"usage limit (synthesized)": {
			file:        "codex/exec-json-rate-limit.jsonl",
			failure:     events.FailureRateLimit,
			messageHas:  "codex hit a rate or usage limit: You've hit your usage limit.",
			resetAt:     time.Date(2026, 11, 22, 15, 28, 0, 0, time.UTC),
			rateLimitAt: []time.Time{time.Date(2026, 11, 22, 15, 28, 0, 0, time.UTC)},
		},
		"wrong API key (synthesized)": {
			file:       "codex/exec-json-auth.jsonl",
			failure:    events.FailureAuth,
			messageHas: "codex could not authenticate: unexpected status 401 Unauthorized",
		},
		"warning item and a recovered error (synthesized)": {
			file:  "codex/exec-json-recovered.jsonl",
			final: "Done.\nLOOP_COMPLETE",
			usage: events.Usage{InputTokens: 200, OutputTokens: 10, CacheReadTokens: 1000},
		},
	})
}

func TestCodexArgs(t *testing.T) {
	base := []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}
	runArgsCases(t, "codex", map[string]argsCase{
		"defaults: the prompt on stdin": {want: append(base[:4:4], "-"), onStdin: true},
		"model":                         {opts: Options{Model: "gpt-5.5"}, want: append(base[:4:4], "-m", "gpt-5.5", "-"), onStdin: true},
		"extra arguments":               {opts: Options{Model: "o3", Args: []string{"-c", "model_reasoning_effort=high"}}, want: append(base[:4:4], "-m", "o3", "-c", "model_reasoning_effort=high", "-"), onStdin: true},
		"prompt on stdin":               {opts: Options{PromptMode: "stdin"}, want: append(base[:4:4], "-"), onStdin: true},
		"prompt as argument":            {opts: Options{PromptMode: "arg", Args: []string{"-c", "x=1"}}, want: append(base[:4:4], "-c", "x=1", "--", "PROMPT")},
	})
}

func TestCodexEnvAndVerdict(t *testing.T) {
	assert.Empty(t, clis["codex"].env(Options{}))

	res := events.AgentResult{}
	clis["codex"].verdict(&res, 1, "Reading additional input from stdin...\n")
	assert.Equal(t, events.FailureExit, res.Failure)
	assert.Equal(t, "codex exited with status 1: Reading additional input from stdin...", res.FailureMessage)
}

// FuzzCodexCommand checks codexCommand, which reads the command decoded as
// an any, against reading it from the raw JSON value as it once did.
func FuzzCodexCommand(f *testing.F) {
	for _, s := range []string{`"/bin/bash -lc 'echo hi'"`, `["bash","-lc","echo hi"]`, `["ls","-la"]`, `["a",null,"b"]`,
		`["a",1]`, `[]`, `null`, `{}`, `3`, `true`, `"\u00e9\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		var c codexCommand
		require.True(t, decodeJSONLine(raw, &c), "%q", raw)
		require.Equal(t, codexCommandFromRaw(raw), c.String())
	})
}

// UnmarshalJSON decodes a codexCommand the way it was before it had
// UnmarshalJSONFrom, as an any field decodeJSONLine filled: sameDecoding
// has encoding/json call it, holding UnmarshalJSONFrom (which
// decodeJSONLine calls instead) to the same results. (Where a number is
// too large, encoding/json makes it nil and jsonv1 0; ralph has been
// jsonv1's.)
func (c *codexCommand) UnmarshalJSON(b []byte) error {
	var v any
	_ = jsonv1.Unmarshal(b, &v) // a number too large: as far as it decoded
	c.v = v
	return nil
}

// codexCommandFromRaw is how codexCommand read a raw command before.
func codexCommandFromRaw(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			return argv[2]
		}
		return strings.Join(argv, " ")
	}
	return ""
}

package backends

// testdata/qwen/stream-json-{tool-loop,tool-error,api-error-400}.jsonl were
// captured with (backends/testdata/README.md#recording):
//
//	OPENAI_API_KEY=sk-test OPENAI_BASE_URL=$BASE/v1 OPENAI_MODEL=fake-model \
//	qwen --auth-type openai -m fake-model --output-format stream-json --yolo PROMPT
//
// (@qwen-code/qwen-code 0.15.10). Exit statuses: 0, 0, 0 — qwen exits 0 on
// an API error, with is_error false.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["qwen"] = conformanceCase{
		Normal:       "qwen/stream-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "qwen/stream-json-api-error-400.jsonl",
		ErrorExit:    0,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParseQwen(t *testing.T) {
	runParserCases(t, parseQwen, map[string]parserCase{
		"tool loop: final text and usage from the result line": {
			file:  "qwen/stream-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			usage: events.Usage{InputTokens: 58248, OutputTokens: 58},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "write_file", path: "/workspace/hello.txt"},
				{kind: events.ToolShell, name: "run_shell_command", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: is_error false with stderr as content": {
			file:     "qwen/stream-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			usage:    events.Usage{InputTokens: 38728, OutputTokens: 26},
			toolActs: []toolAct{{kind: events.ToolShell, name: "run_shell_command", command: "cat does-not-exist.txt"}},
		},
		"API error 400: [API Error: prefix although is_error is false and exit 0": {
			file:    "qwen/stream-json-api-error-400.jsonl",
			final:   "[API Error: 400 fakemodel scripted failure]",
			failure: events.FailureAgent,
			message: "qwen reported an error: API Error: 400 fakemodel scripted failure",
		},
		"HTTP 429 without a body (synthesized)": {
			file:    "qwen/stream-json-rate-limit.jsonl",
			final:   "[API Error: 429 status code (no body)]",
			failure: events.FailureRateLimit,
			message: "qwen hit a rate or usage limit: API Error: 429 status code (no body)",
		},
		"wrong API key (synthesized)": {
			file:       "qwen/stream-json-auth.jsonl",
			final:      "[API Error: 401 Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.]",
			failure:    events.FailureAuth,
			messageHas: "qwen could not authenticate: API Error: 401 Incorrect API key provided",
		},
	})
}

func TestParseQwenStreams(t *testing.T) {
	cases := map[string]struct {
		in      string
		final   string
		usage   events.Usage
		failure events.FailureKind
	}{
		"no result line: last main-agent text and summed usage": {
			in: `{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"first"}],"usage":{"input_tokens":10,"output_tokens":2}}}
{"type":"assistant","parent_tool_use_id":"call_1","message":{"content":[{"type":"text","text":"from a sub-agent"}],"usage":{"input_tokens":5,"output_tokens":1}}}
{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"last"}],"usage":{"input_tokens":20,"output_tokens":3,"cache_read_input_tokens":7}}}`,
			final: "last",
			// qwen's input_tokens include the cached ones: 10+5+20-7.
			usage: events.Usage{InputTokens: 28, OutputTokens: 6, CacheReadTokens: 7},
		},
		"error_max_turns": {
			in:      `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","usage":{"input_tokens":1,"output_tokens":1}}`,
			usage:   events.Usage{InputTokens: 1, OutputTokens: 1},
			failure: events.FailureAgent,
		},
		"no result line and an API error": {
			in:      `{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"[API Error: 500 upstream failed]"}]}}`,
			final:   "[API Error: 500 upstream failed]",
			failure: events.FailureAgent,
		},
	}
	// Past the activity budget from the first line, assistant lines are
	// read without their text, and the result is the same.
	muted := fixedEnv
	muted.activityFull = func() bool { return true }
	for name, tc := range cases {
		for envName, env := range map[string]parseEnv{"": fixedEnv, " past the activity budget": muted} {
			t.Run(name+envName, func(t *testing.T) {
				res := parseQwen(strings.NewReader(tc.in), func(events.Activity) {}, env)
				assert.Equal(t, tc.final, res.FinalText)
				assert.Equal(t, tc.usage, res.Usage)
				assert.Equal(t, tc.failure, res.Failure)
			})
		}
	}
}

func TestQwenArgs(t *testing.T) {
	runArgsCases(t, "qwen", map[string]argsCase{
		"defaults: the prompt on stdin": {want: []string{"--output-format", "stream-json", "--yolo"}, onStdin: true},
		"model":                         {opts: Options{Model: "qwen3-coder-plus"}, want: []string{"--output-format", "stream-json", "--yolo", "-m", "qwen3-coder-plus"}, onStdin: true},
		"prompt as argument, extra arguments before it": {
			opts: Options{PromptMode: "arg", Args: []string{"--auth-type", "openai"}},
			want: []string{"--output-format", "stream-json", "--yolo", "--auth-type", "openai", "PROMPT"},
		},
		"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"--output-format", "stream-json", "--yolo"}, onStdin: true},
		"excluded tools first, so the list ends at a flag": {
			opts: Options{PromptMode: "arg", DisallowedTools: []string{"run_shell_command", "web_fetch"}},
			want: []string{"--exclude-tools", "run_shell_command", "web_fetch", "--output-format", "stream-json", "--yolo", "PROMPT"},
		},
	})
}

func TestQwenEnv(t *testing.T) {
	assert.Empty(t, clis["qwen"].env(Options{}))
}

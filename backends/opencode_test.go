package backends

// testdata/opencode/run-json-{tool-loop,tool-error,api-error-400}.jsonl
// were captured with (backends/testdata/README.md#recording):
//
//	OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
//	opencode run --format json --auto PROMPT
//
// (opencode-ai 1.18.33; opencode.json with an @ai-sdk/openai-compatible
// provider "fake", model fake/fake-model). Exit statuses: 0, 0, 1.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["opencode"] = conformanceCase{
		Normal:       "opencode/run-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "opencode/run-json-api-error-400.jsonl",
		ErrorExit:    1,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParseOpenCode(t *testing.T) {
	runParserCases(t, parseOpenCode, map[string]parserCase{
		"tool loop: usage summed over three steps": {
			file:  "opencode/run-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			usage: events.Usage{InputTokens: 7692 + 7779 + 7847, OutputTokens: 24 + 9 + 25},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "write", path: "/workspace/hello.txt"},
				{kind: events.ToolShell, name: "bash", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: exit 1 in metadata is only a tool use": {
			file:     "opencode/run-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			usage:    events.Usage{InputTokens: 7687 + 7766, OutputTokens: 9 + 17},
			toolActs: []toolAct{{kind: events.ToolShell, name: "bash", command: "cat does-not-exist.txt"}},
		},
		"API error 400: a single error line": {
			file:    "opencode/run-json-api-error-400.jsonl",
			failure: events.FailureAgent,
			message: "opencode reported an error: fakemodel scripted failure (HTTP 400)",
		},
		"HTTP 429 with retry-after (synthesized)": {
			file:        "opencode/run-json-rate-limit.jsonl",
			failure:     events.FailureRateLimit,
			message:     "opencode hit a rate or usage limit: Rate limit exceeded. Please retry after a brief wait. (HTTP 429)",
			resetAt:     testNow.Add(30 * time.Second),
			rateLimitAt: []time.Time{testNow.Add(30 * time.Second)},
		},
		"ProviderAuthError (synthesized)": {
			file:    "opencode/run-json-auth.jsonl",
			failure: events.FailureAuth,
			message: "opencode could not authenticate: No API key found for provider anthropic; run `opencode auth login`, or set the provider's API key",
		},
	})
}

func TestOpenCodeFailure(t *testing.T) {
	cases := map[string]struct {
		name, message, body string
		status              int
		headers             map[string]string
		kind                events.FailureKind
		resetAt             time.Time
	}{
		"retry-after-ms wins": {
			name: "APIError", message: "Too Many Requests", status: 429,
			headers: map[string]string{"Retry-After-Ms": "1500", "retry-after": "9"},
			kind:    events.FailureRateLimit, resetAt: testNow.Add(1500 * time.Millisecond),
		},
		"retry-after as an HTTP date": {
			name: "APIError", message: "Too Many Requests", status: 429,
			headers: map[string]string{"Retry-After": "Sun, 22 Nov 2026 10:05:00 GMT"},
			kind:    events.FailureRateLimit, resetAt: time.Date(2026, 11, 22, 10, 5, 0, 0, time.UTC),
		},
		"the body names the limit": {
			name: "APIError", message: "Bad Request", status: 400,
			body: `{"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}}`,
			kind: events.FailureRateLimit,
		},
		"401": {name: "APIError", message: "Unauthorized", status: 401, kind: events.FailureAuth},
		"an error with only a name": {
			name: "MessageAbortedError", kind: events.FailureAgent,
		},
	}
	for desc, tc := range cases {
		t.Run(desc, func(t *testing.T) {
			f := opencodeFailure(tc.name, tc.message, tc.status, tc.headers, tc.body, testNow)
			assert.Equal(t, tc.kind, f.kind)
			assert.True(t, tc.resetAt.Equal(f.resetAt), "want %v, got %v", tc.resetAt, f.resetAt)
		})
	}
}

func TestOpenCodeArgs(t *testing.T) {
	runArgsCases(t, "opencode", map[string]argsCase{
		"defaults: the prompt on stdin": {want: []string{"run", "--format", "json", "--auto"}, onStdin: true},
		"model":                         {opts: Options{Model: "anthropic/claude-sonnet-4"}, want: []string{"run", "--format", "json", "--auto", "-m", "anthropic/claude-sonnet-4"}, onStdin: true},
		"prompt as argument, extra arguments before it": {
			opts: Options{PromptMode: "arg", Args: []string{"--agent", "build"}},
			want: []string{"run", "--format", "json", "--auto", "--agent", "build", "PROMPT"},
		},
		"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"run", "--format", "json", "--auto"}, onStdin: true},
	})
}

func TestOpenCodeEnv(t *testing.T) {
	assert.Equal(t, []string{"OPENCODE_DISABLE_AUTOUPDATE=1"}, clis["opencode"].env(Options{}))
}

package backends

// testdata/pi/mode-json-{tool-loop,tool-error,api-error-400}.jsonl were
// captured with (backends/testdata/README.md#recording):
//
//	PI_CODING_AGENT_DIR=$HOME/.pi/agent PI_OFFLINE=1 PI_TELEMETRY=0 \
//	pi -p --mode json --provider fake --model fake-model --no-session PROMPT
//
// (@mariozechner/pi-coding-agent 0.73.1; models.json provider "fake" with
// api "openai-completions"). Exit statuses: 0, 0, 0 — pi exits 0 on an API
// error.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["pi"] = conformanceCase{
		Normal:       "pi/mode-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "pi/mode-json-api-error-400.jsonl",
		ErrorExit:    0,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParsePi(t *testing.T) {
	runParserCases(t, parsePi, map[string]parserCase{
		"tool loop: usage summed over assistant messages": {
			file:  "pi/mode-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			usage: events.Usage{InputTokens: 1396 + 1492 + 1561, OutputTokens: 23 + 9 + 25},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "write", path: "/workspace/hello.txt"},
				{kind: events.ToolShell, name: "bash", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: isError on the tool is only a tool use": {
			file:     "pi/mode-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			usage:    events.Usage{InputTokens: 1392 + 1479, OutputTokens: 9 + 17},
			toolActs: []toolAct{{kind: events.ToolShell, name: "bash", command: "cat does-not-exist.txt"}},
		},
		"API error 400: stopReason error although pi exits 0": {
			file:    "pi/mode-json-api-error-400.jsonl",
			failure: events.FailureAgent,
			message: "pi reported an error: 400 fakemodel scripted failure",
		},
		"ChatGPT usage limit (synthesized)": {
			file:        "pi/mode-json-rate-limit.jsonl",
			failure:     events.FailureRateLimit,
			message:     "pi hit a rate or usage limit: You have hit your ChatGPT usage limit (plus plan). Try again in ~91 min.",
			resetAt:     testNow.Add(91 * time.Minute),
			rateLimitAt: []time.Time{testNow.Add(91 * time.Minute)},
		},
		"wrong API key (synthesized)": {
			file:       "pi/mode-json-auth.jsonl",
			failure:    events.FailureAuth,
			messageHas: "pi could not authenticate: 401 ",
		},
		"a 429 that pi's own retry got past (synthesized)": {
			file:        "pi/mode-json-retried.jsonl",
			final:       "Done.\nLOOP_COMPLETE",
			usage:       events.Usage{InputTokens: 100, OutputTokens: 5, CacheReadTokens: 900, CacheWriteTokens: 10},
			cost:        0.0125,
			rateLimitAt: []time.Time{testNow.Add(2 * time.Second)},
		},
	})
}

func TestParsePiRetryGivesUp(t *testing.T) {
	in := `{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"503 overloaded"}}
{"type":"auto_retry_start","attempt":1,"maxAttempts":1,"delayMs":10,"errorMessage":"503 overloaded"}
{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"503 still overloaded"}`
	res := parsePi(strings.NewReader(in), func(events.Activity) {}, fixedEnv)
	assert.Equal(t, events.FailureAgent, res.Failure)
	assert.Equal(t, "pi reported an error: 503 still overloaded", res.FailureMessage)
}

func TestPiArgs(t *testing.T) {
	runArgsCases(t, "pi", map[string]argsCase{
		"defaults: the prompt on stdin": {want: []string{"-p", "--mode", "json", "--no-session"}, onStdin: true},
		"model":                         {opts: Options{Model: "claude-sonnet-4"}, want: []string{"-p", "--mode", "json", "--no-session", "--model", "claude-sonnet-4"}, onStdin: true},
		"prompt as argument, extra arguments before it": {
			opts: Options{PromptMode: "arg", Args: []string{"--provider", "anthropic"}},
			want: []string{"-p", "--mode", "json", "--no-session", "--provider", "anthropic", "PROMPT"},
		},
		"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"-p", "--mode", "json", "--no-session"}, onStdin: true},
	})
}

func TestPiEnv(t *testing.T) {
	assert.Equal(t, []string{"PI_SKIP_VERSION_CHECK=1"}, clis["pi"].env(Options{}))
}

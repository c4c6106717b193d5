package backends

// testdata/claude/stream-json-*.jsonl are real Claude Code output
// (backends/testdata/README.md#recorded-files): @anthropic-ai/claude-code
// 2.1.197, Node 20.20.2, linux-x64, 2026-11-22, pointed at a scripted fake
// model server, captured with
//
//	IS_SANDBOX=1 ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=$BASE DISABLE_TELEMETRY=1 \
//	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
//	claude -p PROMPT --output-format stream-json --verbose --dangerously-skip-permissions </dev/null
//
// (exit status 0 for tool-loop and tool-error, 1 for api-error-400; paths
// scrubbed to /workspace). The streams written inline below are synthetic,
// built from the shapes documented in claude.go, for cases no recording
// covers: rate limits, auth failures, odd lines.

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// parseClaudeString parses a stream and returns the result, the reported
// activity and the number of lines the parser skips because they are not
// JSON objects (see the line policy in jsonl.go).
func parseClaudeString(stream string) (events.AgentResult, []events.Activity, int) {
	var acts []events.Activity
	res := parseClaude(strings.NewReader(stream), func(a events.Activity) { acts = append(acts, a) }, fixedEnv)
	return res, acts, undecodedLines(stream)
}

// undecodedLines counts the non-blank lines of stream that are not JSON
// objects, or do not decode as one.
func undecodedLines(stream string) int {
	n := 0
	_ = forEachLine(strings.NewReader(stream), func(line []byte) {
		line = bytes.TrimSpace(line)
		var v map[string]any
		if len(line) > 0 && (line[0] != '{' || !decodeJSONLine(line, &v)) {
			n++
		}
	})
	return n
}

func parseClaudeFile(t *testing.T, name string) (events.AgentResult, []events.Activity, int) {
	t.Helper()
	b, err := os.ReadFile("testdata/claude/" + name)
	require.NoError(t, err)
	return parseClaudeString(string(b))
}

func TestParseClaudeFixtures(t *testing.T) {
	tests := []struct {
		file      string
		finalText string
		tools     events.ToolCounts
		usage     events.Usage
		cost      float64
		failure   events.FailureKind
		message   string
	}{
		{
			file:      "stream-json-tool-loop.jsonl",
			finalText: toolLoopFinal,
			tools:     events.ToolCounts{Write: 1, Shell: 1},
			usage:     events.Usage{InputTokens: 57407, OutputTokens: 58},
			cost:      0.288485,
		},
		{
			file:      "stream-json-tool-error.jsonl",
			finalText: toolErrorFinal,
			tools:     events.ToolCounts{Shell: 1},
			usage:     events.Usage{InputTokens: 38075, OutputTokens: 26},
			cost:      0.191025,
		},
		{
			file:      "stream-json-api-error-400.jsonl",
			finalText: "API Error: 400 fakemodel scripted failure",
			failure:   events.FailureAgent,
			message:   "claude reported an error: API Error: 400 fakemodel scripted failure",
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, _, nonJSON := parseClaudeFile(t, tt.file)
			assert.Equal(t, tt.finalText, res.FinalText)
			assert.Equal(t, tt.tools, res.Tools)
			assert.Equal(t, tt.usage, res.Usage)
			assert.InDelta(t, tt.cost, res.CostUSD, 1e-9)
			assert.Equal(t, tt.failure, res.Failure)
			assert.Equal(t, tt.message, res.FailureMessage)
			assert.True(t, res.RateLimitResetAt.IsZero())
			assert.Zero(t, nonJSON)
		})
	}
}

func TestParseClaudeToolLoopActivity(t *testing.T) {
	_, acts, _ := parseClaudeFile(t, "stream-json-tool-loop.jsonl")
	want := []events.Activity{
		{Kind: events.ActivityText, Text: toolLoopTexts[0]},
		{Kind: events.ActivityTool, Tool: events.ToolWrite, ToolName: "Write", Path: "/workspace/hello.txt"},
		{Kind: events.ActivityTool, Tool: events.ToolShell, ToolName: "Bash", Command: "echo hi >> hello.txt"},
		{Kind: events.ActivityText, Text: toolLoopFinal},
		{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 57407, OutputTokens: 58}, CostUSD: 0.288485},
	}
	assert.Equal(t, want, acts)
}

func TestParseClaudeAPIErrorActivity(t *testing.T) {
	_, acts, _ := parseClaudeFile(t, "stream-json-api-error-400.jsonl")
	require.NotEmpty(t, acts)
	assert.Equal(t, events.Activity{Kind: events.ActivityError, Text: "API Error: 400 fakemodel scripted failure"}, acts[len(acts)-1])
}

func TestParseClaudeToolKinds(t *testing.T) {
	tests := []struct {
		input string // one tool_use block
		want  events.Activity
	}{
		{`{"type":"tool_use","name":"Read","input":{"file_path":"/w/a.go"}}`, events.Activity{Tool: events.ToolRead, ToolName: "Read", Path: "/w/a.go"}},
		{`{"type":"tool_use","name":"Glob","input":{"pattern":"**/*.go"}}`, events.Activity{Tool: events.ToolRead, ToolName: "Glob", Path: "**/*.go"}},
		{`{"type":"tool_use","name":"Grep","input":{"pattern":"func main","path":"cmd"}}`, events.Activity{Tool: events.ToolRead, ToolName: "Grep", Path: "cmd"}},
		{`{"type":"tool_use","name":"LS","input":{"path":"/w"}}`, events.Activity{Tool: events.ToolRead, ToolName: "LS", Path: "/w"}},
		{`{"type":"tool_use","name":"NotebookRead","input":{"notebook_path":"/w/n.ipynb"}}`, events.Activity{Tool: events.ToolRead, ToolName: "NotebookRead", Path: "/w/n.ipynb"}},
		{`{"type":"tool_use","name":"Write","input":{"file_path":"/w/b.go","content":"x"}}`, events.Activity{Tool: events.ToolWrite, ToolName: "Write", Path: "/w/b.go"}},
		{`{"type":"tool_use","name":"Edit","input":{"file_path":"/w/b.go","old_string":"a","new_string":"b"}}`, events.Activity{Tool: events.ToolWrite, ToolName: "Edit", Path: "/w/b.go"}},
		{`{"type":"tool_use","name":"MultiEdit","input":{"file_path":"/w/c.go","edits":[]}}`, events.Activity{Tool: events.ToolWrite, ToolName: "MultiEdit", Path: "/w/c.go"}},
		{`{"type":"tool_use","name":"NotebookEdit","input":{"notebook_path":"/w/n.ipynb"}}`, events.Activity{Tool: events.ToolWrite, ToolName: "NotebookEdit", Path: "/w/n.ipynb"}},
		{`{"type":"tool_use","name":"Bash","input":{"command":"go test ./...","description":"run tests"}}`, events.Activity{Tool: events.ToolShell, ToolName: "Bash", Command: "go test ./..."}},
		{`{"type":"tool_use","name":"Task","input":{"prompt":"look around"}}`, events.Activity{Tool: events.ToolOther, ToolName: "Task"}},
		{`{"type":"tool_use","name":"mcp__github__get_issue","input":{"number":3}}`, events.Activity{Tool: events.ToolOther, ToolName: "mcp__github__get_issue"}},
	}
	for _, tt := range tests {
		t.Run(tt.want.ToolName, func(t *testing.T) {
			stream := `{"type":"assistant","message":{"id":"m1","content":[` + tt.input + `]}}`
			res, acts, _ := parseClaudeString(stream)
			tt.want.Kind = events.ActivityTool
			assert.Equal(t, []events.Activity{tt.want}, acts)
			var want events.ToolCounts
			want.Count(tt.want.Tool)
			assert.Equal(t, want, res.Tools)
		})
	}
}

// Synthetic streams for verdicts no recording covers.
const (
	claudeInit         = `{"type":"system","subtype":"init","cwd":"/workspace","session_id":"s1","model":"claude-opus-4-8"}`
	claudeLimitText    = `{"type":"assistant","message":{"id":"m9","model":"<synthetic>","content":[{"type":"text","text":"You've hit your limit · resets 2pm (Europe/Berlin)"}],"usage":{"input_tokens":0,"output_tokens":0}},"parent_tool_use_id":null,"error":"rate_limit"}`
	claudeLimitResult  = `{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit · resets 2pm (Europe/Berlin)","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}`
	claudeRejected     = `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1778565600,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false},"uuid":"u1","session_id":"s1"}`
	claudeAllowed      = `{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1778565600,"rateLimitType":"five_hour"},"uuid":"u0","session_id":"s1"}`
	claudeSuccessShort = `{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":2}}`
)

func TestParseClaudeVerdicts(t *testing.T) {
	reset := time.Unix(1778565600, 0).UTC()
	tests := []struct {
		name    string
		stream  []string
		failure events.FailureKind
		message string // substring
		resetAt time.Time
	}{
		{
			name:    "rejected rate_limit_event then an error result",
			stream:  []string{claudeInit, claudeRejected, claudeLimitText, claudeLimitResult},
			failure: events.FailureRateLimit, message: "hit your limit", resetAt: reset,
		},
		{
			name: "flat resetsAt on the event",
			stream: []string{claudeInit, `{"type":"rate_limit_event","status":"rejected","resetsAt":1778565600}`,
				claudeLimitText, claudeLimitResult},
			failure: events.FailureRateLimit, message: "hit your limit", resetAt: reset,
		},
		{
			name:    "rate limit without an event: the assistant's error kind",
			stream:  []string{claudeInit, claudeLimitText, claudeLimitResult},
			failure: events.FailureRateLimit, message: "hit your limit",
		},
		{
			name: "Claude Code 1.0 usage limit text carries the reset",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1778565600"}`},
			failure: events.FailureRateLimit, message: "usage limit reached", resetAt: reset,
		},
		{
			name:   "allowed rate_limit_event is informational",
			stream: []string{claudeInit, claudeAllowed, claudeSuccessShort},
		},
		{
			name:   "rejected event but the run still succeeded",
			stream: []string{claudeInit, claudeRejected, claudeSuccessShort},
		},
		{
			name:    "rejected event and the stream ends without a result",
			stream:  []string{claudeInit, claudeRejected},
			failure: events.FailureRateLimit, message: "rate or usage limit", resetAt: reset,
		},
		{
			name: "not logged in",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login"}`},
			failure: events.FailureAuth, message: "Invalid API key · Please run /login; run `claude /login`",
		},
		{
			name: "401 status",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"API Error: something"}`},
			failure: events.FailureAuth, message: "API Error: something",
		},
		{
			name: "authentication_failed assistant error",
			stream: []string{claudeInit,
				`{"type":"assistant","message":{"id":"m1","model":"<synthetic>","content":[{"type":"text","text":"Your token expired"}]},"error":"authentication_failed"}`,
				`{"type":"result","subtype":"success","is_error":true,"result":"Your token expired"}`},
			failure: events.FailureAuth, message: "Your token expired",
		},
		{
			name: "an overloaded service after Claude Code's retries is the provider's failure",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}`},
			failure: events.FailureProvider, message: `claude reported an error: API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		},
		{
			name: "max turns",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":10,"total_cost_usd":0.5,"usage":{"input_tokens":5,"output_tokens":5}}`},
			failure: events.FailureAgent, message: "claude reported an error: claude ended with error_max_turns",
		},
		{
			name: "error during execution lists its errors",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["tool crashed"]}`},
			failure: events.FailureAgent, message: "tool crashed",
		},
		{
			name: "ordinary text about rate limits is not a rate limit",
			stream: []string{claudeInit,
				`{"type":"result","subtype":"success","is_error":false,"result":"Added a rate limit of 429 per minute; run /login to test."}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, _ := parseClaudeString(strings.Join(tt.stream, "\n") + "\n")
			assert.Equal(t, tt.failure, res.Failure)
			assert.Contains(t, res.FailureMessage, tt.message)
			if tt.failure == events.FailureNone {
				assert.Empty(t, res.FailureMessage)
			}
			assert.Equal(t, tt.resetAt, res.RateLimitResetAt)
		})
	}
}

func TestParseClaudeRateLimitActivity(t *testing.T) {
	_, acts, _ := parseClaudeString(strings.Join([]string{claudeInit, claudeRejected, claudeLimitText, claudeLimitResult}, "\n"))
	var limits []events.Activity
	for _, a := range acts {
		if a.Kind == events.ActivityRateLimit {
			limits = append(limits, a)
		}
	}
	require.Len(t, limits, 1, "one rate-limit activity, not one per line that shows it")
	assert.Equal(t, time.Unix(1778565600, 0).UTC(), limits[0].ResetAt)
}

func TestParseClaudeWithoutResultLine(t *testing.T) {
	// The tool-loop recording cut before its result line, as when the
	// agent is killed: the last text and the summed usage stand in.
	b, err := os.ReadFile("testdata/claude/stream-json-tool-loop.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	res, acts, _ := parseClaudeString(strings.Join(lines[:len(lines)-1], "\n"))

	assert.Equal(t, toolLoopFinal, res.FinalText)
	// Three messages (msg_14da… spans two lines and counts once).
	assert.Equal(t, events.Usage{InputTokens: 19000 + 19118 + 19289, OutputTokens: 3}, res.Usage)
	assert.Zero(t, res.CostUSD)
	assert.Equal(t, events.FailureNone, res.Failure)
	assert.Equal(t, events.ActivityUsage, acts[len(acts)-1].Kind)
}

func TestParseClaudeOddLines(t *testing.T) {
	huge := strings.Repeat("x", 3<<20) // one line of several MB, as a big tool result makes
	stream := strings.Join([]string{
		"Warning: some banner on stdout",
		claudeInit,
		"",
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"` + huge + `"}]}}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"first"}]}}`,
		`["not", "an", "object"]`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"sub-agent text"}]},"parent_tool_use_id":"toolu_1"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"the answer","usage":{"input_tokens":1,"output_tokens":1}}`,
		`{"type":"assistant","message":{"id":"m3","content":[{"type":"te`, // cut off when killed
	}, "\n")
	res, acts, nonJSON := parseClaudeString(stream)
	assert.Equal(t, "the answer", res.FinalText)
	assert.Equal(t, 3, nonJSON, "the banner, the array and the cut-off line")
	texts := 0
	for _, a := range acts {
		if a.Kind == events.ActivityText {
			texts++
		}
	}
	assert.Equal(t, 2, texts)
}

func TestParseClaudeFieldOfUnexpectedType(t *testing.T) {
	// A field of unexpected type costs only that field, not the line.
	res, acts, nonJSON := parseClaudeString(`{"type":"assistant","message":{"id":"m1","content":[` +
		`{"type":"tool_use","name":"Read","input":{"file_path":"/w/a.go","command":["x"]}}]},"error":{"odd":true}}`)
	assert.Zero(t, nonJSON)
	assert.Equal(t, 1, res.Tools.Read)
	assert.Equal(t, []events.Activity{{Kind: events.ActivityTool, Tool: events.ToolRead, ToolName: "Read", Path: "/w/a.go"}}, acts)
}

func TestParseClaudeLastTextIgnoresSubAgents(t *testing.T) {
	res, _, _ := parseClaudeString(strings.Join([]string{
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"mine"}]},"parent_tool_use_id":null}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"sub-agent"}]},"parent_tool_use_id":"toolu_1"}`,
	}, "\n"))
	assert.Equal(t, "mine", res.FinalText)
}

func TestClaudeArgs(t *testing.T) {
	runArgsCases(t, "claude", map[string]argsCase{
		"prompt on stdin by default": {
			want:    []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
			onStdin: true,
		},
		"prompt as argument, model and extra args": {
			opts: Options{PromptMode: "arg", Model: "opus", Args: []string{"--max-turns", "5"}},
			want: []string{"-p", "PROMPT", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
				"--model", "opus", "--max-turns", "5"},
		},
		"disallowed tools before the fixed flags, so the list ends there": {
			opts:    Options{DisallowedTools: []string{"Bash", "WebFetch"}, Args: []string{"--max-turns", "5"}},
			want:    []string{"-p", "--disallowedTools", "Bash", "WebFetch", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--max-turns", "5"},
			onStdin: true,
		},
		"disallowed tools after the prompt argument": {
			opts: Options{PromptMode: "arg", DisallowedTools: []string{"Bash(git push:*)"}},
			want: []string{"-p", "PROMPT", "--disallowedTools", "Bash(git push:*)", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"},
		},
	})
}

func TestClaudeEnv(t *testing.T) {
	env := claudeEnv(Options{})
	if os.Geteuid() == 0 {
		assert.Equal(t, []string{"IS_SANDBOX=1"}, env)
	} else {
		assert.Empty(t, env)
	}
}

func TestClaudeVerdict(t *testing.T) {
	tests := []struct {
		name     string
		res      events.AgentResult
		exit     int
		stderr   string
		failure  events.FailureKind
		message  string
		resetSet bool
	}{
		{name: "success", exit: 0},
		{
			name: "the output's verdict stands", exit: 1,
			res:     events.AgentResult{Failure: events.FailureAgent, FailureMessage: "claude reported an error: x"},
			failure: events.FailureAgent, message: "claude reported an error: x",
		},
		{
			name: "not logged in, on stderr", exit: 1, stderr: "Invalid API key · Please run /login\n",
			failure: events.FailureAuth, message: "claude could not authenticate: exited with status 1: Invalid API key · Please run /login",
		},
		{
			name: "usage limit, on stderr", exit: 1, stderr: "Claude AI usage limit reached|1778565600\n",
			failure: events.FailureRateLimit, message: "claude hit a rate or usage limit", resetSet: true,
		},
		{
			name: "plain crash quotes the last stderr line", exit: 2,
			stderr:  "    at cli.js:401:12\nError: something broke\n\n",
			failure: events.FailureExit, message: "claude exited with status 2: Error: something broke",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.res
			claudeVerdict(&res, tt.exit, tt.stderr)
			assert.Equal(t, tt.failure, res.Failure)
			assert.Contains(t, res.FailureMessage, tt.message)
			assert.Equal(t, tt.resetSet, !res.RateLimitResetAt.IsZero())
		})
	}
}

// Past the activity budget, assistant lines are read without their text:
// their reports are still counted as left out, tools still counted, and a
// stream cut before its result line still ends with its last text.
func TestParseClaudePastTheActivityBudget(t *testing.T) {
	b, err := os.ReadFile("testdata/claude/stream-json-tool-loop.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var got []events.Activity
	budget := &activityBudget{report: func(a events.Activity) { got = append(got, a) }, limit: 1}
	env := fixedEnv
	env.activityFull = budget.full
	res := parseClaude(strings.NewReader(strings.Join(lines[:len(lines)-1], "\n")), budget.add, env)
	budget.finish()

	assert.Equal(t, toolLoopFinal, res.FinalText)
	assert.Equal(t, events.ToolCounts{Write: 1, Shell: 1}, res.Tools)
	assert.Equal(t, events.Usage{InputTokens: 19000 + 19118 + 19289, OutputTokens: 3}, res.Usage)
	require.NotEmpty(t, got)
	assert.Contains(t, got[len(got)-1].Text, "4 activity report(s) of this iteration were left out")
}

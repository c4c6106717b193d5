package backends

// testdata/gemini/stream-json-{tool-loop,tool-error,api-error-400}.jsonl
// were captured with (backends/testdata/README.md#recording):
//
//	GEMINI_API_KEY=sk-test GOOGLE_GEMINI_BASE_URL=$BASE \
//	gemini -p PROMPT --output-format stream-json --yolo --skip-trust
//
// (@google/gemini-cli 0.61.0; ~/.gemini/settings.json selects the
// gemini-api-key auth type). Exit statuses: 0, 0, 144 (HTTP 400 mod 256).

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["gemini"] = conformanceCase{
		Normal:       "gemini/stream-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "gemini/stream-json-api-error-400.jsonl",
		ErrorStderr:  "gemini/stream-json-api-error-400.stderr.txt",
		ErrorExit:    144,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParseGemini(t *testing.T) {
	runParserCases(t, parseGemini, map[string]parserCase{
		"tool loop: write_file, run_shell_command, final deltas": {
			file:  "gemini/stream-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			// result.stats, which include the router's side request.
			usage: events.Usage{InputTokens: 35842, OutputTokens: 65},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "write_file", path: "hello.txt"},
				{kind: events.ToolShell, name: "run_shell_command", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: the failing command came back success": {
			file:     "gemini/stream-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			usage:    events.Usage{InputTokens: 24054, OutputTokens: 39},
			toolActs: []toolAct{{kind: events.ToolShell, name: "run_shell_command", command: "cat does-not-exist.txt"}},
		},
		"API error 400: result status error": {
			file:       "gemini/stream-json-api-error-400.jsonl",
			usage:      events.Usage{InputTokens: 844, OutputTokens: 13},
			failure:    events.FailureAgent,
			messageHas: `gemini reported an error: [API Error: {"error":{"code":400,"message":"fakemodel scripted failure"`,
		},
		"quota exhausted (synthesized)": {
			file:        "gemini/stream-json-rate-limit.jsonl",
			failure:     events.FailureRateLimit,
			message:     "gemini hit a rate or usage limit: [API Error: You have exhausted your capacity on this model. Your quota will reset after 12h22m45s.]",
			resetAt:     testNow.Add(12*time.Hour + 22*time.Minute + 45*time.Second),
			rateLimitAt: []time.Time{testNow.Add(12*time.Hour + 22*time.Minute + 45*time.Second)},
		},
		"API key not valid, an HTTP 400 (synthesized)": {
			file:       "gemini/stream-json-auth.jsonl",
			failure:    events.FailureAuth,
			messageHas: "API key not valid. Please pass a valid API key.",
		},
	})
}

func TestParseGeminiStreams(t *testing.T) {
	cases := map[string]struct {
		in      string
		final   string
		failure events.FailureKind
	}{
		"text before and after tools: only the last run counts": {
			in: `{"type":"message","role":"assistant","content":"one","delta":true}
{"type":"tool_use","tool_name":"read_file","tool_id":"a","parameters":{"file_path":"x"}}
{"type":"tool_result","tool_id":"a","status":"success"}
{"type":"message","role":"assistant","content":"two ","delta":true}
{"type":"message","role":"assistant","content":"three","delta":true}
{"type":"result","status":"success","stats":{}}`,
			final: "two three",
		},
		"a quota error line then success": {
			in: `{"type":"error","severity":"error","message":"Resource exhausted. Please retry in 2s.","status":"RESOURCE_EXHAUSTED"}
{"type":"message","role":"assistant","content":"done","delta":true}
{"type":"result","status":"success","stats":{}}`,
			final: "done",
		},
		"an error line and no result": {
			in:      `{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`,
			failure: events.FailureAgent,
		},
		"a warning line is no failure": {
			in:    `{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}`,
			final: "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := parseGemini(strings.NewReader(tc.in), func(events.Activity) {}, fixedEnv)
			assert.Equal(t, tc.final, res.FinalText)
			assert.Equal(t, tc.failure, res.Failure)
		})
	}
}

func TestGeminiArgs(t *testing.T) {
	runArgsCases(t, "gemini", map[string]argsCase{
		"defaults: the prompt on stdin, without -p": {want: []string{"--output-format", "stream-json", "--yolo", "--skip-trust"}, onStdin: true},
		"model": {opts: Options{Model: "gemini-2.5-pro"}, want: []string{"--output-format", "stream-json", "--yolo", "--skip-trust", "-m", "gemini-2.5-pro"}, onStdin: true},
		"prompt as argument, extra arguments after the prompt's flag": {
			opts: Options{PromptMode: "arg", Args: []string{"--include-directories", "../shared"}},
			want: []string{"-p", "PROMPT", "--output-format", "stream-json", "--yolo", "--skip-trust", "--include-directories", "../shared"},
		},
		"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"--output-format", "stream-json", "--yolo", "--skip-trust"}, onStdin: true},
	})
}

func TestGeminiEnv(t *testing.T) {
	assert.Equal(t, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, clis["gemini"].env(Options{}))
}

func TestGeminiVerdict(t *testing.T) {
	runVerdictCases(t, clis["gemini"].verdict, map[string]verdictCase{
		"the output's verdict stands (the 400 run exits 144)": {
			res:  events.AgentResult{Failure: events.FailureAgent, FailureMessage: "gemini reported an error: x"},
			exit: 144, failure: events.FailureAgent, message: "gemini reported an error: x",
		},
		"exit 0":                {exit: 0},
		"41 authentication":     {exit: 41, failure: events.FailureAuth, message: "gemini could not authenticate (exit 41); run `gemini` once to log in, or set GEMINI_API_KEY"},
		"53 turn limit":         {exit: 53, failure: events.FailureExit, messageHas: "session turn limit (exit 53); raise maxSessionTurns"},
		"55 untrusted folder":   {exit: 55, failure: events.FailureExit, message: "gemini refused to run in an untrusted folder (exit 55); pass --skip-trust or set GEMINI_CLI_TRUST_WORKSPACE=true"},
		"144 is HTTP 400":       {exit: 144, failure: events.FailureAgent, message: "gemini's model API answered HTTP 400 (exit 144)"},
		"244 is HTTP 500":       {exit: 244, failure: events.FailureAgent, message: "gemini's model API answered HTTP 500 (exit 244)"},
		"145 is HTTP 401":       {exit: 145, failure: events.FailureAuth, messageHas: "HTTP 401 (exit 145); run `gemini` once to log in"},
		"173 is HTTP 429":       {exit: 173, failure: events.FailureRateLimit, messageHas: "HTTP 429 (exit 173)"},
		"1 quotes stderr":       {exit: 1, stderr: "Error: something broke\n", failure: events.FailureExit, message: "gemini exited with status 1: Error: something broke"},
		"130 cancelled":         {exit: 130, failure: events.FailureExit, message: "gemini was cancelled (exit 130)"},
		"52 bad configuration":  {exit: 52, failure: events.FailureExit, messageHas: "could not load its configuration (exit 52)"},
		"42 bad input":          {exit: 42, failure: events.FailureExit, message: "gemini rejected its input (exit 42)"},
		"44 sandbox":            {exit: 44, failure: events.FailureExit, messageHas: "(exit 44)"},
		"54 fatal tool failure": {exit: 54, failure: events.FailureExit, messageHas: "(exit 54)"},
	})
}

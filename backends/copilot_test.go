package backends

// testdata/copilot/output-json-{tool-loop,tool-error,api-error-400}.jsonl
// were captured with (backends/testdata/README.md#recording):
//
//	COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=$BASE/v1 COPILOT_PROVIDER_TYPE=openai \
//	COPILOT_PROVIDER_API_KEY=sk-test COPILOT_MODEL=fake-model COPILOT_AUTO_UPDATE=false \
//	copilot -p PROMPT --output-format json --allow-all-tools --disable-client-telemetry --no-auto-update
//
// (@github/copilot 1.0.102, BYOK mode: no token counts are printed). Exit
// statuses: 0, 0, 1.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// The recordings also run through the conformance suite, end to end.
func init() {
	conformanceCases["copilot"] = conformanceCase{
		Normal:       "copilot/output-json-tool-loop.jsonl",
		NormalTools:  true,
		Error:        "copilot/output-json-api-error-400.jsonl",
		ErrorExit:    1,
		ErrorFailure: events.FailureAgent,
	}
}

func TestParseCopilot(t *testing.T) {
	runParserCases(t, parseCopilot, map[string]parserCase{
		"tool loop: create, bash, last assistant.message": {
			file:  "copilot/output-json-tool-loop.jsonl",
			final: toolLoopFinal,
			tools: events.ToolCounts{Write: 1, Shell: 1},
			toolActs: []toolAct{
				{kind: events.ToolWrite, name: "create", path: "/workspace/hello.txt"},
				{kind: events.ToolShell, name: "bash", command: "echo hi >> hello.txt"},
			},
			texts: toolLoopTexts,
		},
		"tool error: exit code 1 with success true is only a tool use": {
			file:     "copilot/output-json-tool-error.jsonl",
			final:    toolErrorFinal,
			tools:    events.ToolCounts{Shell: 1},
			toolActs: []toolAct{{kind: events.ToolShell, name: "bash", command: "cat does-not-exist.txt"}},
		},
		"API error 400: session.error and result exitCode 1": {
			file:    "copilot/output-json-api-error-400.jsonl",
			failure: events.FailureAgent,
			message: "copilot reported an error: 400 fakemodel scripted failure",
		},
		"rate_limit session.error (synthesized)": {
			file:        "copilot/output-json-rate-limit.jsonl",
			failure:     events.FailureRateLimit,
			messageHas:  "copilot hit a rate or usage limit: Sorry, you've hit a rate limit",
			resetAt:     testNow.Add(2 * time.Hour),
			rateLimitAt: []time.Time{testNow.Add(2 * time.Hour)},
		},
		"authentication session.error (synthesized)": {
			file:       "copilot/output-json-auth.jsonl",
			failure:    events.FailureAuth,
			messageHas: "copilot could not authenticate: Authentication failed",
		},
	})
}

func TestParseCopilotStreams(t *testing.T) {
	cases := map[string]struct {
		in      string
		final   string
		usage   events.Usage
		failure events.FailureKind
	}{
		"a sub-agent's message is not the final text": {
			in: `{"type":"assistant.message","data":{"content":"main answer"}}
{"type":"assistant.message","agentId":"sub-1","data":{"content":"sub-agent answer"}}
{"type":"assistant.message","data":{"content":"old sub-agent answer","parentToolCallId":"call_9"}}
{"type":"result","exitCode":0}`,
			final: "main answer",
		},
		"assistant.usage is summed": {
			in: `{"type":"assistant.usage","ephemeral":true,"data":{"model":"m","inputTokens":100,"outputTokens":7,"cacheReadTokens":50,"cost":1}}
{"type":"assistant.usage","ephemeral":true,"data":{"model":"m","inputTokens":10,"outputTokens":3,"cacheWriteTokens":5}}`,
			usage: events.Usage{InputTokens: 110, OutputTokens: 10, CacheReadTokens: 50, CacheWriteTokens: 5},
		},
		"recovered from a session.error": {
			in: `{"type":"session.error","data":{"errorType":"rate_limit","message":"Please try again in 1 minute.","statusCode":429}}
{"type":"assistant.message","data":{"content":"done"}}
{"type":"result","exitCode":0}`,
			final: "done",
		},
		"non-zero exitCode without a session.error": {
			in:      `{"type":"result","exitCode":2}`,
			failure: events.FailureAgent,
		},
		"quota errorType": {
			in:      `{"type":"session.error","data":{"errorType":"quota","errorCode":"quota_exceeded","message":"You have no premium requests left."}}`,
			failure: events.FailureRateLimit,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := parseCopilot(strings.NewReader(tc.in), func(events.Activity) {}, fixedEnv)
			assert.Equal(t, tc.final, res.FinalText)
			assert.Equal(t, tc.usage, res.Usage)
			assert.Equal(t, tc.failure, res.Failure)
		})
	}
}

func TestCopilotArgs(t *testing.T) {
	base := []string{"--output-format", "json", "--allow-all-tools", "--disable-client-telemetry", "--no-auto-update"}
	runArgsCases(t, "copilot", map[string]argsCase{
		"defaults: the prompt on stdin, without -p": {want: base, onStdin: true},
		"model": {opts: Options{Model: "gpt-5.5"}, want: append(base[:5:5], "--model", "gpt-5.5"), onStdin: true},
		"prompt as argument, extra arguments after the prompt's flag": {
			opts: Options{PromptMode: "arg", Model: "claude-sonnet-4.5", Args: []string{"--add-dir", "/tmp"}},
			want: append([]string{"-p", "PROMPT"}, append(base[:5:5], "--model", "claude-sonnet-4.5", "--add-dir", "/tmp")...),
		},
		"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: base, onStdin: true},
		"denied tools before the fixed flags": {
			opts:    Options{DisallowedTools: []string{"shell(git push)", "write"}},
			want:    append([]string{"--deny-tool", "shell(git push)", "write"}, base...),
			onStdin: true,
		},
		"denied tools after the prompt's flag": {
			opts: Options{PromptMode: "arg", DisallowedTools: []string{"shell"}},
			want: append([]string{"-p", "PROMPT", "--deny-tool", "shell"}, base...),
		},
	})
}

func TestCopilotEnv(t *testing.T) {
	assert.Equal(t, []string{"COPILOT_AUTO_UPDATE=false"}, clis["copilot"].env(Options{}))
}

// testdata/copilot/usage-output.json is what `copilot … --usage-output-file F`
// wrote after a two-request BYOK session against the fake model (only the
// file path edited): the tokens its stdout leaves out.
func TestReadCopilotUsage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "copilot", "usage-output.json"))
	require.NoError(t, err)
	u, err := readCopilotUsage(data)
	require.NoError(t, err)
	assert.Equal(t, events.Usage{InputTokens: 24052, OutputTokens: 18}, u)

	u, err = readCopilotUsage([]byte(`{"modelMetrics":{"a":{"usage":{"inputTokens":10,"outputTokens":2,"cacheReadTokens":4}},"b":{"usage":{"inputTokens":1,"outputTokens":1,"cacheWriteTokens":3}}}}`))
	require.NoError(t, err)
	assert.Equal(t, events.Usage{InputTokens: 11, OutputTokens: 3, CacheReadTokens: 4, CacheWriteTokens: 3}, u, "summed over models")

	_, err = readCopilotUsage([]byte("not json"))
	assert.Error(t, err)
}

// TestCopilotRunReadsUsageFile runs the copilot backend against the fake
// agent, which replays a recorded stream (no token counts) and writes the
// recorded usage file where --usage-output-file says.
func TestCopilotRunReadsUsageFile(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record.json")
	var acts activities
	b, err := New(Options{Name: "copilot", Command: fakeAgentPath(t), KillGrace: fakeGrace})
	require.NoError(t, err)
	res, err := b.Run(t.Context(), events.AgentRun{Prompt: "p", Dir: t.TempDir(), Env: fakeEnv(
		"STDOUT", absTestdata(t, "copilot/output-json-tool-loop.jsonl"),
		"ARG_FILE", "--usage-output-file="+absTestdata(t, "copilot/usage-output.json"),
		"RECORD", record)}, acts.report)
	require.NoError(t, err)
	assert.Equal(t, events.Usage{InputTokens: 24052, OutputTokens: 18}, res.Usage)
	assert.Equal(t, 1, acts.count(events.ActivityUsage), "usage reported once")

	args := readFakeRecord(t, record).Args
	i := slices.Index(args, "--usage-output-file")
	require.GreaterOrEqual(t, i, 0, "args %q", args)
	require.Less(t, i+1, len(args))
	assert.NoFileExists(t, args[i+1], "the usage file is removed after the run")
	assert.NoDirExists(t, filepath.Dir(args[i+1]))
}

func TestCopilotUsageFileCases(t *testing.T) {
	t.Run("the user's own --usage-output-file is read and kept", func(t *testing.T) {
		own := filepath.Join(t.TempDir(), "mine.json")
		b, err := New(Options{Name: "copilot", Command: fakeAgentPath(t), Args: []string{"--usage-output-file", own}})
		require.NoError(t, err)
		record := filepath.Join(t.TempDir(), "record.json")
		res, err := b.Run(t.Context(), events.AgentRun{Prompt: "p", Dir: t.TempDir(), Env: fakeEnv(
			"ARG_FILE", "--usage-output-file="+absTestdata(t, "copilot/usage-output.json"), "RECORD", record)}, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(24052), res.Usage.InputTokens)
		assert.FileExists(t, own)
		args := readFakeRecord(t, record).Args
		n := 0
		for _, a := range args {
			if a == "--usage-output-file" {
				n++
			}
		}
		assert.Equal(t, 1, n, "the flag is not given twice: %q", args)
	})
	t.Run("--usage-output-file=PATH is the user's too", func(t *testing.T) {
		own := filepath.Join(t.TempDir(), "mine.json")
		f, args, err := newUsageFile(clis["copilot"].usageFile, []string{"-p", "x", "--usage-output-file=" + own})
		require.NoError(t, err)
		assert.Equal(t, own, f.path)
		assert.Equal(t, []string{"-p", "x", "--usage-output-file=" + own}, args)
	})
	t.Run("no file written: no usage, no error", func(t *testing.T) {
		var acts activities
		b, err := New(Options{Name: "copilot", Command: fakeAgentPath(t)})
		require.NoError(t, err)
		res, err := b.Run(t.Context(), events.AgentRun{Prompt: "p", Dir: t.TempDir(), Env: fakeEnv(
			"STDOUT", absTestdata(t, "copilot/output-json-tool-loop.jsonl"))}, acts.report)
		require.NoError(t, err)
		assert.Equal(t, events.Usage{}, res.Usage)
		assert.Zero(t, acts.count(events.ActivityError))
	})
	t.Run("usage printed on stdout is not counted twice", func(t *testing.T) {
		f := &usageFile{spec: clis["copilot"].usageFile, path: absTestdata(t, "copilot/usage-output.json"), cleanup: func() {}}
		res := events.AgentResult{Usage: events.Usage{InputTokens: 5, OutputTokens: 1}}
		f.apply(&res, func(events.Activity) { t.Error("nothing to report") })
		assert.Equal(t, events.Usage{InputTokens: 5, OutputTokens: 1}, res.Usage)
	})
	t.Run("a file that does not parse is reported, not fatal", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "usage.json")
		require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))
		var acts activities
		f := &usageFile{spec: clis["copilot"].usageFile, path: bad, cleanup: func() {}}
		var res events.AgentResult
		f.apply(&res, acts.report)
		assert.Equal(t, events.Usage{}, res.Usage)
		assert.Equal(t, 1, acts.count(events.ActivityError))
	})
}

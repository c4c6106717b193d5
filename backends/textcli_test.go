package backends

// kiro, amp and cursor could not be installed where the other CLIs were
// recorded (backends/testdata/README.md#made-up-files), so there are no
// recordings; their plain-text output is made up here.

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestTextCLIArgs(t *testing.T) {
	cases := map[string]map[string]argsCase{
		"kiro": {
			"defaults":        {want: []string{"chat", "--no-interactive", "--trust-all-tools", "PROMPT"}},
			"model":           {opts: Options{Model: "claude-sonnet-4"}, want: []string{"chat", "--no-interactive", "--trust-all-tools", "--model", "claude-sonnet-4", "PROMPT"}},
			"extra arguments": {opts: Options{Args: []string{"--agent", "dev"}}, want: []string{"chat", "--no-interactive", "--trust-all-tools", "--agent", "dev", "PROMPT"}},
			"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"chat", "--no-interactive", "--trust-all-tools"}, onStdin: true},
		},
		"amp": {
			"defaults":                 {want: []string{"-x", "PROMPT", "--dangerously-allow-all"}},
			"amp picks its own model":  {opts: Options{Model: "anything"}, want: []string{"-x", "PROMPT", "--dangerously-allow-all"}},
			"extra arguments":          {opts: Options{Args: []string{"--mode", "rush"}}, want: []string{"-x", "PROMPT", "--dangerously-allow-all", "--mode", "rush"}},
			"prompt on stdin, -x last": {opts: Options{PromptMode: "stdin", Args: []string{"--mode", "rush"}}, want: []string{"--dangerously-allow-all", "--mode", "rush", "-x"}, onStdin: true},
		},
		"cursor": {
			"defaults":        {want: []string{"-p", "--output-format", "text", "--force", "PROMPT"}},
			"model":           {opts: Options{Model: "gpt-5"}, want: []string{"-p", "--output-format", "text", "--force", "--model", "gpt-5", "PROMPT"}},
			"extra arguments": {opts: Options{Args: []string{"--trust"}}, want: []string{"-p", "--output-format", "text", "--force", "--trust", "PROMPT"}},
			"prompt on stdin": {opts: Options{PromptMode: "stdin"}, want: []string{"-p", "--output-format", "text", "--force"}, onStdin: true},
		},
	}
	for name, argsCases := range cases {
		t.Run(name, func(t *testing.T) {
			runArgsCases(t, name, argsCases)
			assert.Empty(t, clis[name].env(Options{}))
		})
	}
}

func TestParseText(t *testing.T) {
	out := "Reading the repository…\n\nDone.\n<event topic=\"build.done\">ok</event>\nLOOP_COMPLETE\n"
	var texts []string
	res := clis["kiro"].parse(strings.NewReader(out), func(a events.Activity) {
		assert.Equal(t, events.ActivityText, a.Kind)
		texts = append(texts, a.Text)
	}, fixedEnv)
	assert.Equal(t, events.AgentResult{FinalText: out}, res, "all of stdout, nothing else")
	assert.Equal(t, []string{"Reading the repository…", "Done.", "<event topic=\"build.done\">ok</event>", "LOOP_COMPLETE"}, texts)
}

func TestParseTextKeepsTheEndOfHugeOutput(t *testing.T) {
	line := strings.Repeat("x", 1023) + "\n"
	out := strings.Repeat(line, maxTextOutput/len(line)+100) + "LOOP_COMPLETE\n"
	res := clis["cursor"].parse(strings.NewReader(out), func(events.Activity) {}, fixedEnv)
	assert.LessOrEqual(t, len(res.FinalText), maxTextOutput)
	assert.True(t, strings.HasSuffix(res.FinalText, "LOOP_COMPLETE\n"))
	note, rest, _ := strings.Cut(res.FinalText, "\n")
	assert.Regexp(t, `^\[ralph kept the last \d+ bytes of the agent's output; \d+ bytes before them were cut \(max_output_text_bytes\)\]$`, note)
	assert.True(t, strings.HasPrefix(rest, strings.Repeat("x", 1023)+"\n"), "cut at a line start")
}

func TestTextCLIVerdict(t *testing.T) {
	cases := map[string]struct {
		cli        string
		final      string
		exit       int
		stderr     string
		failure    events.FailureKind
		message    string
		messageHas string
	}{
		"exit 0 is success whatever the text says": {cli: "amp", final: "I hit a rate limit in the API I was testing.\n", exit: 0},
		"kiro exit 3": {cli: "kiro", exit: 3, failure: events.FailureExit, message: "kiro: an MCP server required by --require-mcp-startup did not start (exit 3)"},
		"kiro exit 4": {cli: "kiro", exit: 4, failure: events.FailureExit, messageHas: "was not found (exit 4)"},
		"stderr names the limit": {
			cli: "cursor", exit: 1, stderr: "Error: You've hit your usage limit. Please try again in 3 hours.\n",
			failure: events.FailureRateLimit,
		},
		"stdout names the credentials problem": {
			cli: "amp", exit: 1, final: "Error: not logged in\n",
			failure: events.FailureAuth, message: "amp could not authenticate: Error: not logged in; run `amp login`, or set AMP_API_KEY",
		},
		"plain failure quotes stderr": {
			cli: "kiro", exit: 1, final: "partial answer\n", stderr: "error: the model request failed\n",
			failure: events.FailureExit, message: "kiro exited with status 1: error: the model request failed",
		},
		"plain failure without stderr quotes stdout": {
			cli: "cursor", exit: 1, final: "something went wrong\n",
			failure: events.FailureExit, message: "cursor exited with status 1: something went wrong",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := events.AgentResult{FinalText: tc.final}
			clis[tc.cli].verdict(&res, tc.exit, tc.stderr)
			assert.Equal(t, tc.failure, res.Failure)
			if tc.message != "" {
				assert.Equal(t, tc.message, res.FailureMessage)
			}
			if tc.messageHas != "" {
				assert.Contains(t, res.FailureMessage, tc.messageHas)
			}
		})
	}
}

// Past the activity budget the text parser leaves its lines' text unbuilt,
// and they are still counted as left out, blank lines not; a line longer
// than the reader's buffer is reported and kept whole.
func TestParsePlainTextPastTheActivityBudget(t *testing.T) {
	long := strings.Repeat("l", 10000)
	stdout := "first line\n" + long + "\n\n  \nthird\r\nfourth\nfifth"
	var got []events.Activity
	b := &activityBudget{report: func(a events.Activity) { got = append(got, a) }, limit: 2*activityOverhead + len("first line") + len(long)}
	env := fixedEnv
	env.activityFull = b.full
	res := textParser(strings.NewReader(stdout), b.add, env)
	b.finish()

	assert.Equal(t, stdout, res.FinalText)
	require.Len(t, got, 4)
	assert.Equal(t, events.Activity{Kind: events.ActivityText, Text: "first line"}, got[0])
	assert.Equal(t, events.Activity{Kind: events.ActivityText, Text: long}, got[1])
	assert.Contains(t, got[2].Text, "max_activity_bytes")
	assert.Contains(t, got[3].Text, "3 activity report(s) of this iteration were left out past max_activity_bytes")
}

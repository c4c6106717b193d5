package backends

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

func TestCommandArgs(t *testing.T) {
	runArgsCases(t, "command", map[string]argsCase{
		"prompt last by default": {opts: Options{Args: []string{"--fast"}}, want: []string{"--fast", "PROMPT"}},
		"prompt after its flag":  {opts: Options{Args: []string{"run"}, PromptFlag: "-m"}, want: []string{"run", "-m", "PROMPT"}},
		"prompt on stdin":        {opts: Options{Args: []string{"run"}, PromptMode: "stdin", PromptFlag: "-m"}, want: []string{"run"}, onStdin: true},
	})
}

func TestCommandArgsDoesNotAliasOptions(t *testing.T) {
	opts := Options{Args: make([]string, 1, 8)}
	a := commandArgs(opts, "one", false)
	b := commandArgs(opts, "two", false)
	assert.Equal(t, "one", a[1], "a later run must not overwrite an earlier run's arguments")
	assert.Equal(t, "two", b[1])
}

func TestParsePlainText(t *testing.T) {
	// A line in Claude's stream-json shape is still just text here.
	claudeLike := `{"type":"result","subtype":"success","is_error":true,"result":"not a verdict"}`
	stdout := "Working.\n\n" + claudeLike + "\n<event topic=\"build.done\">ok</event>\nno newline at the end"
	var acts []events.Activity
	res := clis[nameCommand].parse(strings.NewReader(stdout), func(a events.Activity) { acts = append(acts, a) }, fixedEnv)

	assert.Equal(t, events.AgentResult{FinalText: stdout}, res)
	assert.Equal(t, []events.Activity{
		{Kind: events.ActivityText, Text: "Working."},
		{Kind: events.ActivityText, Text: claudeLike},
		{Kind: events.ActivityText, Text: `<event topic="build.done">ok</event>`},
		{Kind: events.ActivityText, Text: "no newline at the end"},
	}, acts)
}

func TestCommandVerdict(t *testing.T) {
	tests := []struct {
		name    string
		exit    int
		stderr  string
		failure events.FailureKind
		message string
	}{
		{name: "exit 0 succeeds", exit: 0, stderr: "warning: whatever\n"},
		{name: "non-zero exit quotes stderr", exit: 4, stderr: "starting\nboom: disk full\n", failure: events.FailureExit,
			message: "command exited with status 4: boom: disk full"},
		{name: "non-zero exit without stderr", exit: 1, failure: events.FailureExit, message: "command exited with status 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res events.AgentResult
			commandVerdict(&res, tt.exit, tt.stderr)
			assert.Equal(t, tt.failure, res.Failure)
			assert.Equal(t, tt.message, res.FailureMessage)
		})
	}
}

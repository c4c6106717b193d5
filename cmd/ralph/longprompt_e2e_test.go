package main

// A prompt that would not fit in a command-line argument (Linux refuses one
// over 128 KiB): a 150 KB event payload, as a test log pasted into an emit,
// and a 150 KB objective, as a long tracker description. The prompt shows
// their beginning and end with the command that prints each whole, and the
// loop, and a resume of it, run to the end.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longLog is a test log of about size bytes whose first, middle and last
// lines hold prefix+"HEAD", prefix+"MIDDLE" and prefix+"TAIL".
func longLog(prefix string, size int) string {
	var b strings.Builder
	b.WriteString(prefix + "HEAD go test ./...\n")
	middle := false
	for i := 0; b.Len() < size; i++ {
		if !middle && b.Len() >= size/2 {
			b.WriteString(prefix + "MIDDLE\n")
			middle = true
		}
		fmt.Fprintf(&b, "=== RUN   TestCase%05d\n--- PASS: TestCase%05d (0.00s)\n", i, i)
	}
	b.WriteString("FAIL " + prefix + "TAIL\n")
	return b.String()
}

// longPayloadConfig: the builder publishes test.log with the log the test
// put in the workspace; the reviewer gets it and completes.
const longPayloadConfig = `event_loop:
  prompt_file: OBJECTIVE.md
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 6
hats:
  builder:
    name: Builder
    triggers: [task.start]
    publishes: [test.log]
    instructions: Run the tests and publish their log as test.log.
  reviewer:
    name: Reviewer
    triggers: [test.log]
    publishes: [LOOP_COMPLETE]
    instructions: Read the test log and complete the loop.
`

// emitTestLog is the builder's shell command: the log goes to ralph emit on
// stdin, since as an argument it would be too long.
const emitTestLog = `"$RALPH_BIN" emit test.log - < test.log`

// fetchWhole is the reviewer's shell command: it runs the two commands its
// prompt (the scripted agent's second run) names for what it could not
// show whole.
const fetchWhole = `p="$SCRIPTAGENT_STATE/prompt-2.txt"
payload=$(sed -n 's/.*` + "`" + `\(.* events --offset [0-9]* --payload\)` + "`" + ` prints all of it\./\1/p' "$p")
objective=$(sed -n 's/.*` + "`" + `\(.* status --objective\)` + "`" + ` prints all of it\./\1/p' "$p" | head -n 1)
test -n "$payload" && test -n "$objective" && eval "$payload" > fetched.log && eval "$objective" > fetched-objective.md`

// TestLongPayloadAndObjectiveAsAnArgument: the command backend gets its
// prompt as an argument (prompt_mode: arg); a pending event of 150 KB and
// an objective of 150 KB leave it short enough for one, and the agent
// prints both whole with the commands its prompt names. The run is stopped
// after the builder and resumed, as a run that died on the long prompt
// would be.
func TestLongPayloadAndObjectiveAsAnArgument(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", longPayloadConfig+agentCLI()+"  prompt_mode: arg\n")
	testLog, objective := longLog("LOG-", 150_000), longLog("OBJECTIVE-", 150_000)
	w.write("test.log", testLog)
	w.write("OBJECTIVE.md", objective)
	w.script(agentScript{ByHat: map[string][]step{
		"builder":  {{Sh: emitTestLog, Say: "Published the test log."}},
		"reviewer": {{Sh: fetchWhole, Say: "Read the log. " + tag("LOOP_COMPLETE", "reviewed")}},
	}})

	r := w.ralph("loop", "--max-iterations", "1")
	require.Equal(t, 2, r.code, "stopped at max_iterations after the builder: %s", r.stderr)
	r = w.ralph("loop", "--resume", "--max-iterations", "3")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		"ralph task.start", "agent test.log", "finished builder success", "terminate max_iterations", "ralph loop.resumed",
		"tag LOOP_COMPLETE", "finished reviewer success", "terminate completed",
	}, w.flow())
	assert.NotContains(t, r.stderr, "too long for a command-line argument", "the prompt fit: ralph kept it short")

	prompt := w.prompt(2)
	assert.Less(t, len(prompt), 100<<10, "the reviewer's prompt fits in one argument")
	for _, mark := range []string{"LOG-HEAD", "LOG-TAIL", "OBJECTIVE-HEAD", "OBJECTIVE-TAIL"} {
		assert.Contains(t, prompt, mark)
	}
	assert.NotContains(t, prompt, "LOG-MIDDLE")
	assert.NotContains(t, prompt, "OBJECTIVE-MIDDLE")
	assert.Equal(t, strings.TrimSuffix(testLog, "\n"), strings.TrimSuffix(w.read("fetched.log"), "\n"),
		"the command the prompt names prints the whole payload")
	assert.Equal(t, objective, w.read("fetched-objective.md"), "and the whole objective")
}

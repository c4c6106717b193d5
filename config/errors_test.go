package config_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/golden"
)

// problemCase is a file with one mistake and the exact problem it must give.
type problemCase struct {
	name string
	file string // defaults to ralph.yml
	data string
	want config.Problem
}

// runProblemCases loads every case's file as a named subtest.
func runProblemCases(t *testing.T, tests []problemCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "ralph.yml"
			}
			c, err := config.LoadBytes(file, []byte(tt.data))
			require.Error(t, err)
			assert.Nil(t, c)
			var cerr *config.Error
			require.ErrorAs(t, err, &cerr)
			assert.Equal(t, []config.Problem{tt.want}, cerr.Problems)
		})
	}
}

func TestLoadBytesProblems(t *testing.T) {
	runProblemCases(t, []problemCase{
		{
			name: "unknown key close to a known one",
			data: "event_loop:\n  max_iteration: 10\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `unknown key "max_iteration" in event_loop; did you mean "max_iterations"?`,
				Hint: `rename it to "max_iterations", or remove it`},
		},
		{
			name: "unknown key far from every known one",
			data: "cli:\n  flavour: vanilla\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `unknown key "flavour" in cli`,
				Hint: "remove it, or use one of: backend, command, args, prompt_mode, prompt_flag, env, model, fallback, fallback_after_seconds, disallowed_tools"},
		},
		{
			name: "unknown top-level key",
			data: "evnt_loop:\n  prompt: x\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `unknown key "evnt_loop" at top level; did you mean "event_loop"?`,
				Hint: `rename it to "event_loop", or remove it`},
		},
		{
			name: "unknown top-level key close to a flat key",
			data: "max_iteration: 3\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `unknown key "max_iteration" at top level; did you mean "max_iterations"?`,
				Hint: `rename it to "max_iterations", or remove it`},
		},
		{
			name: "unknown hat key",
			data: "hats:\n  builder:\n    trigers: [build.start]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `unknown key "trigers" in hats.builder; did you mean "triggers"?`,
				Hint: `rename it to "triggers", or remove it`},
		},
		{
			name: "string for an integer",
			data: "event_loop:\n  max_iterations: \"ten\"\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.max_iterations: expected an integer, got "ten"`,
				Hint: "write a whole number without quotes, e.g. max_iterations: 10"},
		},
		{
			name: "fraction for an integer",
			data: "event_loop:\n  kill_grace_seconds: 2.5\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.kill_grace_seconds: expected an integer, got 2.5",
				Hint: "write a whole number without quotes, e.g. kill_grace_seconds: 10"},
		},
		{
			name: "string for a number",
			data: "event_loop:\n  max_cost_usd: five\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.max_cost_usd: expected a number, got "five"`,
				Hint: "write a number without quotes, e.g. max_cost_usd: 2.50"},
		},
		{
			name: "string for a boolean",
			data: "event_loop:\n  enforce_hat_scope: \"yes\"\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.enforce_hat_scope: expected true or false, got "yes"`,
				Hint: "write true or false, without quotes"},
		},
		{
			name: "list for a string",
			data: "event_loop:\n  prompt: [a, b]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.prompt: expected a string, got a list",
				Hint: "write it on one line after the colon, quoted if it has special characters"},
		},
		{
			name: "string for a section",
			data: "event_loop: fast\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `event_loop: expected a mapping, got "fast"`,
				Hint: "write the keys of event_loop indented below it, one per line"},
		},
		{
			name: "mapping for a list",
			data: "cli:\n  args: {a: b}\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "cli.args: expected a list of strings, got a mapping",
				Hint: "write a list, e.g. args: [a, b]"},
		},
		{
			name: "mapping in a list",
			data: "cli:\n  args:\n    - {a: b}\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "cli.args: expected a string item, got a mapping",
				Hint: "write each item as a string on its own `- ` line"},
		},
		{
			name: "list for env",
			data: "cli:\n  env: [A=1]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "cli.env: expected a mapping, got a list",
				Hint: "write one NAME: value per line, indented below env"},
		},
		{
			name: "negative runtime",
			data: "event_loop:\n  max_runtime_seconds: -5\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.max_runtime_seconds must not be negative, got -5",
				Hint: "use a positive number, or 0 for no limit"},
		},
		{
			name: "negative cost",
			data: "event_loop:\n  max_cost_usd: -1.5\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.max_cost_usd must not be negative, got -1.5",
				Hint: "use a positive amount in US dollars, or 0 for no limit"},
		},
		{
			name: "negative tokens",
			data: "event_loop:\n  max_tokens: -1\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.max_tokens must not be negative, got -1",
				Hint: "use a positive number, or 0 for no limit"},
		},
		{
			name: "negative pacing budget",
			data: "event_loop:\n  tokens_per_hour: -1000\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.tokens_per_hour must not be negative, got -1000",
				Hint: "use a positive number, or 0 for no budget"},
		},
		{
			name: "negative cost pacing budget",
			data: "event_loop:\n  max_cost_usd: 5\n  cost_per_day: -2.5\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "event_loop.cost_per_day must not be negative, got -2.5",
				Hint: "use a positive amount in US dollars, or 0 for no limit"},
		},
		{
			name: "pacing budgets written as the limits: section",
			data: "limits:\n  tokens_per_hour: 1000\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  "unknown key \"limits\" at top level; the limits and pacing budgets (tokens_per_hour, tokens_per_day, cost_per_hour, cost_per_day) are keys of event_loop",
				Hint: "move its keys under event_loop:, e.g. event_loop: {tokens_per_hour: 2000000, cost_per_day: 50}"},
		},
		{
			name: "negative max activations",
			data: "hats:\n  builder:\n    max_activations: -2\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "hats.builder.max_activations must not be negative, got -2",
				Hint: "use a positive number, or 0 for no bound"},
		},
		{
			name: "no iterations",
			data: "event_loop:\n  max_iterations: 0\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.max_iterations must be at least 1, got 0",
				Hint: "set how many iterations a run may take, e.g. max_iterations: 100"},
		},
		{
			name: "three confirmations",
			data: "event_loop:\n  completion_confirmations: 3\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "event_loop.completion_confirmations must be 1 or 2, got 3",
				Hint: "use 1 to accept the first completion claim, or 2 to have a fresh agent confirm it"},
		},
		{
			name: "misspelt backend",
			data: "cli:\n  backend: cladue\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `cli.backend: unknown backend "cladue"; did you mean "claude"?`,
				Hint: "use one of: claude, codex, gemini, opencode, pi, qwen, copilot, kiro, amp, cursor, command, auto; command runs the program given in command:"},
		},
		{
			name: "unknown backend",
			data: "cli:\n  backend: roo\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `cli.backend: unknown backend "roo"`,
				Hint: "use one of: claude, codex, gemini, opencode, pi, qwen, copilot, kiro, amp, cursor, command, auto; command runs the program given in command:"},
		},
		{
			name: "command backend without command",
			data: "cli:\n  backend: command\n  args: [-x]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `cli.backend is "command" but cli.command is not set`,
				Hint: "set cli.command to the program to run, e.g. command: ./agent.sh"},
		},
		{
			name: "custom backend without command",
			data: "agent: custom\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `cli.backend is "command" but cli.command is not set`,
				Hint: "set cli.command to the program to run, e.g. command: ./agent.sh"},
		},
		{
			name: "hat backend named command",
			data: "hats:\n  builder:\n    backend: command\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `hats.builder.backend is "command", which needs a command to run`,
				Hint: "write the backend as a mapping: backend: {backend: command, command: ./agent.sh}"},
		},
		{
			name: "hat backend mapping without command",
			data: "hats:\n  builder:\n    backend:\n      backend: custom\n",
			want: config.Problem{File: "ralph.yml", Line: 4,
				Msg:  `hats.builder.backend.backend is "command" but hats.builder.backend.command is not set`,
				Hint: "set hats.builder.backend.command to the program to run, e.g. command: ./agent.sh"},
		},
		{
			name: "hat backend of the wrong type",
			data: "hats:\n  builder:\n    backend: [claude]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "hats.builder.backend: expected a backend name or a mapping, got a list",
				Hint: "write a backend name, e.g. backend: codex, or a mapping like cli:"},
		},
		{
			name: "misspelt hat backend",
			data: "hats:\n  builder:\n    backend: gemnii\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `hats.builder.backend: unknown backend "gemnii"; did you mean "gemini"?`,
				Hint: "use one of: claude, codex, gemini, opencode, pi, qwen, copilot, kiro, amp, cursor, command, auto; command runs the program given in command:"},
		},
		{
			name: "bad prompt mode",
			data: "cli:\n  prompt_mode: file\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `cli.prompt_mode must be "arg" or "stdin", got "file"`,
				Hint: `use "arg" to pass the prompt as an argument after prompt_flag, or "stdin" to write it to the agent's standard input`},
		},
		{
			name: "two hats on one trigger",
			data: "hats:\n  builder:\n    triggers: [build.start]\n  tester:\n    triggers:\n      - test.start\n      - build.start\n",
			want: config.Problem{File: "ralph.yml", Line: 7,
				Msg:  `hats "builder" (line 3) and "tester" (line 7) both trigger on "build.start"`,
				Hint: "an event goes to one hat: keep the trigger on one of them, or have one publish a new topic for the other"},
		},
		{
			name: "trigger on the reserved resume topic",
			data: "hats:\n  builder:\n    triggers: task.resume\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `hats.builder.triggers: "task.resume" is reserved for ralph`,
				Hint: "ralph publishes task.resume to hand control back to its coordinator; trigger on a topic of your own"},
		},
		{
			name: "hat id with a space",
			data: "hats:\n  my builder:\n    triggers: [build.start]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `hat id "my builder" has characters ralph does not allow`,
				Hint: "use letters, digits, - and _, starting with a letter or digit; the id names the hat in events and in RALPH_HAT"},
		},
		{
			name: "hat id with a dot",
			data: "hats:\n  build.er: {}\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `hat id "build.er" has characters ralph does not allow`,
				Hint: "use letters, digits, - and _, starting with a letter or digit; the id names the hat in events and in RALPH_HAT"},
		},
		{
			name: "hat id of the coordinator",
			data: "hats:\n  ralph: {}\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `hat id "ralph" is taken by ralph's built-in coordinator`,
				Hint: "choose another id for this hat"},
		},
		{
			name: "hats as a list",
			data: "hats:\n  - builder\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "hats: expected a mapping of hat ids to hats, got a list",
				Hint: "write each hat under its id, e.g. hats: {builder: {triggers: [build.start]}}"},
		},
		{
			name: "trigger with whitespace",
			data: "hats:\n  builder:\n    triggers: [\"build start\"]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `hats.builder.triggers: invalid topic pattern "build start": it contains whitespace`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "empty published topic",
			data: "hats:\n  builder:\n    publishes:\n      - \"\"\n",
			want: config.Problem{File: "ralph.yml", Line: 4,
				Msg:  `hats.builder.publishes: invalid topic "": it is empty`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "default publish with whitespace",
			data: "hats:\n  builder:\n    default_publishes: build done\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `hats.builder.default_publishes: invalid topic "build done": it contains whitespace`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "completion promise with whitespace",
			data: "event_loop:\n  completion_promise: \"LOOP COMPLETE\"\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.completion_promise: invalid topic "LOOP COMPLETE": it contains whitespace`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "empty completion promise",
			data: "event_loop:\n  completion_promise: \"\"\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.completion_promise: invalid topic "": it is empty`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "required event with a tab",
			data: "event_loop:\n  required_events: [review.passed, \"tests\\tpass\"]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `event_loop.required_events: invalid topic "tests\tpass": it contains whitespace`,
				Hint: "a topic is words joined by dots, without spaces, e.g. build.done"},
		},
		{
			name: "empty file",
			data: "",
			want: config.Problem{File: "ralph.yml",
				Msg:  "the file is empty",
				Hint: "write at least the objective, e.g. event_loop: {prompt: \"…\"}, or run `ralph init`"},
		},
		{
			name: "only comments",
			data: "# event_loop:\n#   prompt: x\n",
			want: config.Problem{File: "ralph.yml",
				Msg:  "the file is empty",
				Hint: "write at least the objective, e.g. event_loop: {prompt: \"…\"}, or run `ralph init`"},
		},
		{
			name: "a list at the top",
			data: "- event_loop\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  "expected keys such as event_loop: and hats: at the top, got a list",
				Hint: "start the file with `event_loop:`, `cli:` or `hats:` at the beginning of a line"},
		},
		{
			name: "bad indentation",
			data: "event_loop:\n  prompt: x\n max_iterations: 3\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "invalid YAML: did not find expected key",
				Hint: "check the indentation (spaces, not tabs) and the quoting on this line and the one before"},
		},
		{
			name: "bad JSON",
			file: "ralph.json",
			data: "{\n\t\"task\": \"x\"\n\t\"max_iterations\": 3\n}\n",
			want: config.Problem{File: "ralph.json", Line: 3,
				Msg:  "invalid JSON: did not find expected ',' or '}'",
				Hint: "check for a missing comma, quote or brace on this line or the one before"},
		},
		{
			name: "a key twice",
			data: "event_loop:\n  prompt: a\n  prompt: b\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `key "prompt" appears twice, on lines 2 and 3`,
				Hint: "remove one of them"},
		},
		{
			name: "a second document",
			data: "event_loop:\n  prompt: a\n---\ncli:\n  backend: codex\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "a second YAML document starts here",
				Hint: "ralph reads one document per file: remove the `---` line, or split it into files and pass each with -c"},
		},
		{
			name: "a flat key and its section key",
			data: "max_iterations: 5\nevent_loop:\n  max_iterations: 7\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  "max_iterations is set twice: here and as event_loop.max_iterations on line 3",
				Hint: "remove max_iterations, or event_loop.max_iterations"},
		},
		{
			name: "task and prompt",
			file: "ralph.json",
			data: `{"task": "a", "event_loop": {"prompt": "b"}}`,
			want: config.Problem{File: "ralph.json", Line: 1,
				Msg:  "task is set twice: here and as event_loop.prompt on line 1",
				Hint: "remove task, or event_loop.prompt"},
		},
		{
			name: "a flat key of the wrong type",
			data: "max_runtime: soon\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `max_runtime: expected an integer, got "soon"`,
				Hint: "write a whole number without quotes, e.g. max_runtime: 10"},
		},
		{
			name: "budget key unknown",
			file: "ralph.json",
			data: "{\n  \"task\": \"x\",\n  \"budget\": {\"max_token\": 10}\n}\n",
			want: config.Problem{File: "ralph.json", Line: 3,
				Msg:  `unknown key "max_token" in budget; did you mean "max_tokens"?`,
				Hint: `rename it to "max_tokens", or remove it`},
		},
		{
			name: "budget not a mapping",
			file: "ralph.json",
			data: `{"task": "x", "budget": 10}`,
			want: config.Problem{File: "ralph.json", Line: 1,
				Msg:  "budget: expected a mapping, got 10",
				Hint: "write budget: {max_tokens: 100000}"},
		},
		{
			name: "budget tokens of the wrong type",
			file: "ralph.json",
			data: `{"task": "x", "budget": {"max_tokens": "lots"}}`,
			want: config.Problem{File: "ralph.json", Line: 1,
				Msg:  `budget.max_tokens: expected an integer, got "lots"`,
				Hint: "write a whole number without quotes, e.g. max_tokens: 10"},
		},
	})
}

// A file with many mistakes reports all of them, in line order, one per
// line of Error().
func TestLoadBytesReportsEveryProblem(t *testing.T) {
	data := `event_loop:
  max_iteration: 10
  max_runtime_seconds: -1
  completion_confirmations: 0
cli:
  backend: cursr
  prompt_mode: pipe
hats:
  builder:
    triggers: build.start
    publishes: [build.done]
  tester:
    triggers: [build.start, task.resume]
    max_activations: lots
  "bad id":
    description: x
`
	_, err := config.LoadBytes("ralph.yml", []byte(data))
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	assert.Len(t, cerr.Problems, 9)
	golden.Assert(t, "testdata/every_problem.golden", err.Error()+"\n")
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		name string
		p    config.Problem
		want string
	}{
		{"file and line", config.Problem{File: "a.yml", Line: 3, Msg: "bad", Hint: "fix it"}, "a.yml:3: bad (hint: fix it)"},
		{"file only", config.Problem{File: "a.yml", Msg: "bad", Hint: "fix it"}, "a.yml: bad (hint: fix it)"},
		{"no file", config.Problem{Line: 3, Msg: "bad", Hint: "fix it"}, "bad (hint: fix it)"},
		{"no hint", config.Problem{File: "a.yml", Line: 3, Msg: "bad"}, "a.yml:3: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.p.String())
		})
	}
}

func TestErrorExitCode(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", nil)
	var coder interface{ ExitCode() int }
	require.ErrorAs(t, err, &coder)
	assert.Equal(t, 3, coder.ExitCode(), "docs/architecture.md#exit-codes: 3 is a fatal error such as a bad config")
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yml")
	_, err := config.Load(path)
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.Equal(t, path+": read config: no such file or directory", err.Error())
	assert.Equal(t, "check the path given with -c, or run `ralph init` to write a ralph.yml", hintOf(t, err))
}

func TestLoadNoFile(t *testing.T) {
	_, err := config.Load()
	require.Error(t, err)
	assert.Equal(t, "load config: no file given", err.Error())
	assert.Equal(t, "pass -c ralph.yml, or run in a directory that has one", hintOf(t, err))
}

// hintOf is the hint the CLI prints under the error.
func hintOf(t *testing.T, err error) string {
	t.Helper()
	var h interface{ Hint() string }
	require.ErrorAs(t, err, &h)
	return h.Hint()
}

// One problem renders as an error line and a separate hint, for the CLI's
// "ralph: error:" and "ralph: hint:" lines; several render one per line,
// each with its hint.
func TestErrorRendering(t *testing.T) {
	one := &config.Error{Problems: []config.Problem{{File: "a.yml", Line: 2, Msg: "bad", Hint: "fix it\nlike this"}}}
	assert.Equal(t, "a.yml:2: bad", one.Error())
	assert.Equal(t, "fix it\nlike this", one.Hint())

	two := &config.Error{Problems: []config.Problem{
		{File: "a.yml", Line: 2, Msg: "bad", Hint: "fix it"},
		{File: "a.yml", Line: 5, Msg: "worse", Hint: "fix that"},
	}}
	assert.Equal(t, "a.yml:2: bad (hint: fix it)\na.yml:5: worse (hint: fix that)", two.Error())
	assert.Empty(t, two.Hint())
}

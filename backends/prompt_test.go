package backends

import (
	"cmp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// TestLongPromptIsNeverAnArgument: for every CLI and prompt mode, a 200 KB
// prompt (Linux refuses one argument over 128 KiB) is on stdin, or, for the
// command backend given it as an argument, cut to fit with its beginning
// and end kept. The conformance suite runs the same through a process for
// the CLIs it has recordings of.
func TestLongPromptIsNeverAnArgument(t *testing.T) {
	prompt := "HEAD-MARK " + strings.Repeat("x", 200<<10) + " TAIL-MARK"
	for _, name := range Names() {
		spec := clis[name]
		for _, mode := range []string{"", "arg", "stdin"} {
			t.Run(name+"/prompt_mode "+cmp.Or(mode, "default"), func(t *testing.T) {
				opts := Options{Name: name, PromptMode: mode, PromptFlag: "--prompt", Args: []string{"--extra"}}
				d := deliver(spec, opts, prompt)
				args := spec.args(opts, d.arg, d.onStdin)
				for _, a := range args {
					assert.LessOrEqual(t, len(a), maxArgPrompt)
				}
				if d.onStdin {
					assert.NotContains(t, args, prompt)
					return
				}
				require.Equal(t, nameCommand, name, "only the command backend takes a cut prompt as an argument")
				last := args[len(args)-1]
				assert.True(t, strings.HasPrefix(last, "HEAD-MARK "))
				assert.True(t, strings.HasSuffix(last, " TAIL-MARK"))
				assert.Contains(t, d.warning, "set cli.prompt_mode: stdin to pass it whole on stdin")
			})
		}
	}
}

func TestDeliver(t *testing.T) {
	short, long := "PROMPT", strings.Repeat("x", maxArgPrompt+1)
	cases := map[string]struct {
		cli, mode, prompt string
		onStdin           bool
		warns             bool
	}{
		"a CLI that reads stdin gets it there":                      {cli: "pi", prompt: short, onStdin: true},
		"unless prompt_mode is arg":                                 {cli: "pi", mode: "arg", prompt: short},
		"and even then when it is too long":                         {cli: "copilot", mode: "arg", prompt: long, onStdin: true, warns: true},
		"an untested CLI gets an argument":                          {cli: "cursor", prompt: short},
		"or stdin when asked":                                       {cli: "kiro", mode: "stdin", prompt: short, onStdin: true},
		"or stdin when the prompt is too long":                      {cli: "amp", prompt: long, onStdin: true, warns: true},
		"a command gets an argument":                                {cli: "command", prompt: short},
		"a command gets a cut argument when the prompt is too long": {cli: "command", prompt: long, warns: true},
		"a command gets stdin when asked, whatever the length":      {cli: "command", mode: "stdin", prompt: long, onStdin: true},
		"a prompt of exactly the limit is still an argument":        {cli: "command", prompt: long[1:]},
	}
	for desc, tc := range cases {
		t.Run(desc, func(t *testing.T) {
			d := deliver(clis[tc.cli], Options{PromptMode: tc.mode}, tc.prompt)
			assert.Equal(t, tc.onStdin, d.onStdin)
			assert.Equal(t, tc.warns, d.warning != "", "warning %q", d.warning)
			if !tc.onStdin && !tc.warns {
				assert.Equal(t, tc.prompt, d.arg, "a prompt that fits is passed unchanged")
			}
		})
	}
}

// TestArgumentListTooLongIsExplained: what is too long for the system, when
// it is not the prompt, is the rest of the command line or the environment;
// the error says so, and how much of each there was.
func TestArgumentListTooLongIsExplained(t *testing.T) {
	b, err := New(Options{Name: "command", Command: fakeAgentPath(t), Args: []string{strings.Repeat("a", 200<<10)}})
	require.NoError(t, err)
	_, err = b.Run(t.Context(), events.AgentRun{Prompt: "p", Dir: t.TempDir()}, nil)
	var setup *SetupError
	require.ErrorAs(t, err, &setup)
	assert.ErrorIs(t, err, syscall.E2BIG)
	assert.Contains(t, setup.Error(), "command cannot start: its command line (")
	assert.Contains(t, setup.Error(), "the longest argument 204800")
	assert.Contains(t, setup.Hint(), "shorten cli.args")
}

package config_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestLoadBytesDisallowedTools(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(
		"cli:\n  backend: claude\n  disallowed_tools: [WebFetch, Bash(git push:*)]\n  fallback: [qwen]\n"+
			"hats:\n  builder:\n    triggers: [a]\n  reviewer:\n    triggers: [b]\n    disallowed_tools: [Bash, WebFetch]\n"+
			"  tester:\n    triggers: [c]\n    backend: {model: opus}\n"))
	require.NoError(t, err)
	assert.Empty(t, c.Warnings, "disallowed_tools is no longer an ignored key")
	builder, reviewer, tester := c.Hats[0], c.Hats[1], c.Hats[2]
	assert.Equal(t, []string{"WebFetch", "Bash(git push:*)"}, c.DisallowedTools(builder), "cli:'s for a hat with none")
	assert.Equal(t, []string{"WebFetch", "Bash(git push:*)", "Bash"}, c.DisallowedTools(reviewer), "a hat's are added to cli:'s, each once")
	assert.Equal(t, []string{"WebFetch", "Bash(git push:*)"}, c.DisallowedTools(tester), "a backend: of its own does not drop cli:'s")
	assert.Empty(t, tester.Backend.DisallowedTools, "a hat's backend: has no list of its own")

	d, err := config.LoadBytes("ralph.yml", []byte("hats:\n  builder:\n    triggers: [a]\n    disallowed_tools: Bash\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Bash"}, d.DisallowedTools(d.Hats[0]), "one tool without the list")
}

func TestLoadBytesDisallowedToolsProblems(t *testing.T) {
	cases := []struct {
		name, data string
		want       config.Problem
		hint       string
	}{
		{"an empty name", "cli:\n  disallowed_tools:\n    - Bash\n    - \"  \"\n",
			config.Problem{Line: 4, Msg: "cli.disallowed_tools: item 2 is empty"}, "name a tool"},
		{"not a list", "hats:\n  h:\n    triggers: [a]\n    disallowed_tools: {Bash: true}\n",
			config.Problem{Line: 4, Msg: "hats.h.disallowed_tools: expected a list of strings, got a mapping"}, "write a list"},
		{"cli's backend cannot deny", "cli:\n  backend: codex\n  disallowed_tools: [shell]\n",
			config.Problem{Line: 3, Msg: "cli: disallowed_tools needs a CLI that can deny tools, but it may run on codex (cli.backend), which has no deny list"},
			"run it on a CLI that can deny tools (claude, copilot, gemini, opencode, qwen), or remove disallowed_tools"},
		{"a fallback of cli cannot deny", "cli:\n  backend: claude\n  fallback: [gemini, pi]\n  disallowed_tools: [Bash]\n",
			config.Problem{Line: 4, Msg: "cli: disallowed_tools needs a CLI that can deny tools, but it may run on pi (cli's fallback), which has no deny list"},
			"--tools"},
		{"the hat's own backend cannot deny", "hats:\n  reviewer:\n    triggers: [a]\n    backend: pi\n    disallowed_tools: [bash]\n",
			config.Problem{Line: 5, Msg: "hat reviewer: disallowed_tools needs a CLI that can deny tools, but it may run on pi (hats.reviewer.backend), which has no deny list"},
			"--tools"},
		{"the hat's list on cli's backend", "cli:\n  backend: amp\nhats:\n  reviewer:\n    triggers: [a]\n    disallowed_tools: [Bash]\n",
			config.Problem{Line: 6, Msg: "hat reviewer: disallowed_tools needs a CLI that can deny tools, but it may run on amp (cli.backend), which has no deny list"},
			"remove disallowed_tools"},
		{"cli's list on a hat's backend: at the hat's backend", "cli:\n  disallowed_tools: [Bash]\nhats:\n  reviewer:\n    triggers: [a]\n    backend: codex\n",
			config.Problem{Line: 6, Msg: "hat reviewer: disallowed_tools needs a CLI that can deny tools, but it may run on codex (hats.reviewer.backend), which has no deny list"},
			"remove disallowed_tools"},
		{"a hat's fallback cannot deny", "hats:\n  reviewer:\n    triggers: [a]\n    backend: {name: claude, fallback: [codex]}\n    disallowed_tools: [Bash]\n",
			config.Problem{Line: 5, Msg: "hat reviewer: disallowed_tools needs a CLI that can deny tools, but it may run on codex (hats.reviewer's fallback), which has no deny list"},
			"remove disallowed_tools"},
		{"not in a backend mapping", "hats:\n  reviewer:\n    triggers: [a]\n    backend: {name: claude, disallowed_tools: [Bash]}\n",
			config.Problem{Line: 4, Msg: `unknown key "disallowed_tools" in hats.reviewer.backend`}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.LoadBytes("ralph.yml", []byte(tc.data))
			var cerr *config.Error
			require.True(t, errors.As(err, &cerr), "got %v", err)
			require.Len(t, cerr.Problems, 1, "%v", cerr.Problems)
			p := cerr.Problems[0]
			assert.Equal(t, "ralph.yml", p.File)
			assert.Equal(t, tc.want.Line, p.Line, p.Msg)
			assert.Equal(t, tc.want.Msg, p.Msg)
			assert.NotEmpty(t, p.Hint, "every problem says how to fix it")
			assert.Contains(t, p.Hint, tc.hint)
		})
	}
}

func TestDisallowedToolsLeftToTheStartForAuto(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", []byte("cli:\n  backend: auto\n  disallowed_tools: [Bash]\n"))
	assert.NoError(t, err, "auto's CLI is known when the run starts, which checks it")
}

package config_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestLoadBytesFallback(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(
		"cli:\n  backend: claude\n  fallback: [codex, {name: gemini, model: gemini-2.5-pro}]\n  fallback_after_seconds: 900\n"+
			"hats:\n  builder:\n    backend: {name: codex, fallback: [claude]}\n  reviewer:\n    backend: {model: opus}\n  tester:\n    backend: gemini\n"))
	require.NoError(t, err)
	assert.Equal(t, []config.CLI{{Backend: "codex"}, {Backend: "gemini", Model: "gemini-2.5-pro"}}, c.CLI.Fallback)
	assert.Equal(t, 15*time.Minute, c.CLI.FallbackAfter(c.CLI))

	builder, reviewer, tester := c.Hats[0].Backend, c.Hats[1].Backend, c.Hats[2].Backend
	assert.Equal(t, []config.CLI{{Backend: "claude"}}, builder.Fallback, "a hat's own chain")
	assert.Equal(t, 15*time.Minute, builder.FallbackAfter(c.CLI), "cli's fallback_after_seconds")
	assert.Equal(t, c.CLI.Fallback, reviewer.Fallback, "a mapping without backend: is cli: with its keys laid over, the chain too")
	assert.Empty(t, tester.Fallback, "a backend named alone has no chain")

	d, err := config.LoadBytes("ralph.yml", []byte("cli:\n  fallback: codex\n"))
	require.NoError(t, err)
	assert.Equal(t, []config.CLI{{Backend: "codex"}}, d.CLI.Fallback, "one backend without the list")
	assert.Equal(t, 10*time.Minute, d.CLI.FallbackAfter(d.CLI), "the default")
}

func TestLoadBytesFallbackProblems(t *testing.T) {
	cases := []struct {
		name, data string
		want       config.Problem
	}{
		{"unknown backend, with the nearest name", "cli:\n  fallback:\n    - codx\n",
			config.Problem{Line: 3, Msg: `cli.fallback[0]: unknown backend "codx"; did you mean "codex"?`}},
		{"unknown backend in a mapping", "cli:\n  fallback: [codex, {name: gemeni}]\n",
			config.Problem{Line: 2, Msg: `cli.fallback[1].name: unknown backend "gemeni"; did you mean "gemini"?`}},
		{"listed twice", "cli:\n  fallback:\n    - codex\n    - gemini\n    - {name: codex, model: o3}\n",
			config.Problem{Line: 5, Msg: "cli.fallback[2]: codex is listed twice in cli.fallback (also cli.fallback[0])"}},
		{"the primary listed again", "cli:\n  backend: claude\n  fallback: [codex, claude]\n",
			config.Problem{Line: 3, Msg: "cli.fallback[1]: claude is cli.backend already; a chain tries each backend once"}},
		{"a hat's primary listed again", "hats:\n  builder:\n    backend:\n      name: codex\n      fallback: [codex]\n",
			config.Problem{Line: 5, Msg: "hats.builder.backend.fallback[0]: codex is hats.builder.backend already; a chain tries each backend once"}},
		{"an entry without a name", "cli:\n  fallback:\n    - {model: o3}\n",
			config.Problem{Line: 3, Msg: "cli.fallback[0] names no backend"}},
		{"an entry with a chain of its own", "cli:\n  fallback:\n    - {name: codex, fallback: [gemini]}\n",
			config.Problem{Line: 3, Msg: `unknown key "fallback" in cli.fallback[0]`}},
		{"a zero wait", "cli:\n  fallback: codex\n  fallback_after_seconds: 0\n",
			config.Problem{Line: 3, Msg: "cli.fallback_after_seconds must be at least 1, got 0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.LoadBytes("ralph.yml", []byte(tc.data))
			var cerr *config.Error
			require.True(t, errors.As(err, &cerr), "got %v", err)
			require.NotEmpty(t, cerr.Problems)
			p := cerr.Problems[0]
			assert.Equal(t, tc.want.Line, p.Line, p.Msg)
			assert.Equal(t, tc.want.Msg, p.Msg)
			assert.NotEmpty(t, p.Hint, "every problem says how to fix it")
		})
	}
}

package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestSetCLIFlowMapping(t *testing.T) {
	out, err := config.SetCLI([]byte("cli: {backend: claude}   # agent\n"), config.CLI{Backend: "command", Command: "./a b.sh", Args: []string{"x"}})
	require.NoError(t, err)
	assert.Equal(t, "cli: {backend: command, command: \"./a b.sh\", args: [x]}   # agent\n", string(out))
	out, err = config.SetCLI([]byte("cli:\n  backend: claude"), config.CLI{Backend: "command", Command: "./a.sh"})
	require.NoError(t, err)
	assert.Equal(t, "cli:\n  backend: command\n  command: ./a.sh", string(out), "no newline at the end")
}

func TestSetBackendQuoted(t *testing.T) {
	for _, in := range []string{
		"cli:\n  backend: \"claude\"   # the agent\n",
		"cli:\n  backend: 'claude'\n",
		"cli: {backend: claude}\n",
		"# é\ncli:\n  backend: claude\n",
	} {
		out, err := config.SetCLI([]byte(in), config.CLI{Backend: "gemini"})
		require.NoError(t, err, in)
		assert.Equal(t, strings.NewReplacer(`"claude"`, "gemini", "'claude'", "gemini", "claude", "gemini").Replace(in), string(out))
	}
	out, err := config.SetCLI([]byte("event_loop:\n  prompt: x\n"), config.CLI{Backend: "codex"})
	require.NoError(t, err)
	assert.Equal(t, "event_loop:\n  prompt: x\n\ncli:\n  backend: codex\n", string(out), "a preset without cli: gets one")
}

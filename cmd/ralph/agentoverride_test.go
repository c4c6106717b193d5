package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/config"
)

// --backend and --model change cli: as a task's agent needs: the same
// backend keeps what cli: says of it, another starts bare.
func TestOverrideAgent(t *testing.T) {
	t.Parallel()
	cli := config.CLI{Backend: "claude", Command: "/opt/claude", Args: []string{"--verbose"}, Model: "sonnet", Env: map[string]string{"A": "b"}}
	for name, c := range map[string]struct {
		backend, model string
		want           config.CLI
	}{
		"nothing":               {"", "", cli},
		"a model":               {"", "opus", config.CLI{Backend: "claude", Command: "/opt/claude", Args: []string{"--verbose"}, Model: "opus", Env: map[string]string{"A": "b"}}},
		"the same backend":      {"claude", "", cli},
		"another backend":       {"codex", "", config.CLI{Backend: "codex"}},
		"another with a model":  {"codex", "gpt-5", config.CLI{Backend: "codex", Model: "gpt-5"}},
		"the same with a model": {"claude", "haiku", config.CLI{Backend: "claude", Command: "/opt/claude", Args: []string{"--verbose"}, Model: "haiku", Env: map[string]string{"A": "b"}}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, c.want, overrideAgent(cli, c.backend, c.model))
		})
	}
}

// A task's agent is denied what cli: denies, whichever CLI it names.
func TestOverrideAgentKeepsDisallowedTools(t *testing.T) {
	t.Parallel()
	cli := config.CLI{Backend: "claude", Args: []string{"--verbose"}, DisallowedTools: []string{"Bash"}}
	assert.Equal(t, config.CLI{Backend: "qwen", DisallowedTools: []string{"Bash"}}, overrideAgent(cli, "qwen", ""))
}

package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestLoadBytesHuman(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("human:\n  timeout_seconds: 1800\n  on_timeout: stop\n"))
	require.NoError(t, err)
	assert.Equal(t, config.Human{TimeoutSeconds: 1800, OnTimeout: "stop"}, c.Human)

	c, err = config.LoadBytes("ralph.yml", []byte("event_loop:\n  prompt: x\n"))
	require.NoError(t, err)
	assert.Equal(t, config.Human{OnTimeout: "continue"}, c.Human, "by default a question waits until answered")
}

func TestLoadBytesHumanProblems(t *testing.T) {
	runProblemCases(t, []problemCase{
		{
			name: "unknown on_timeout",
			data: "human:\n  on_timeout: abort\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: `human.on_timeout: unknown value "abort"`, Hint: "use one of: continue, stop (stop ends the run, exit 1)"},
		},
		{
			name: "negative timeout",
			data: "human:\n  timeout_seconds: -5\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "human.timeout_seconds must not be negative, got -5", Hint: "use a positive number, or 0 for no timeout"},
		},
	})
}

package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestHooksLoadWithDefaults(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(`hooks:
  - on: [loop.terminate, "task.*"]
    run: ./notify.sh
  - name: web
    on: human.asked
    post: https://hooks.example.com/ralph
    timeout_seconds: 5
    on_error: fail
`))
	require.NoError(t, err)
	require.Len(t, c.Hooks, 2)
	h := c.Hooks[0]
	assert.Equal(t, "hook-1", h.Name)
	assert.Equal(t, []string{"loop.terminate", "task.*"}, h.On)
	assert.Equal(t, 30, h.TimeoutSeconds)
	assert.Equal(t, "warn", h.OnError)
	assert.Equal(t, 2, h.Line)
	assert.Equal(t, 3, h.RunAt)
	assert.Equal(t, []int{2, 2}, h.OnAt)
	assert.Equal(t, config.Hook{Name: "web", On: []string{"human.asked"}, Post: "https://hooks.example.com/ralph",
		TimeoutSeconds: 5, OnError: "fail", File: "ralph.yml", Line: 4, OnAt: []int{5}}, c.Hooks[1])
}

func TestHookProblemsHaveFileAndLine(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", []byte(`hooks:
  - run: ./a.sh
  - on: [x.y]
    run: ./a.sh
    post: http://h/x
  - on: [x.y]
    run: ./b.sh
    on_error: explode
    timeout_seconds: 0
  - name: hook-1
    on: ["a b"]
    run: ./c.sh
`))
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		"ralph.yml:2: hooks[0]: on is missing",
		"ralph.yml:3: hooks[1]: a hook needs exactly one of run and post",
		`ralph.yml:8: hooks[2].on_error`,
		`ralph.yml:9: hooks[2].timeout_seconds`,
		`ralph.yml:10: hooks: a second hook named "hook-1"`,
		`ralph.yml:11: hooks[3].on: invalid topic pattern "a b"`,
	} {
		assert.Contains(t, msg, want)
	}
}

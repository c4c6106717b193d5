package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/golden"
)

const mergeBase = `event_loop:
  prompt: base objective
  max_iterations: 10
  required_events: [a.done, b.done]
cli:
  backend: claude
  args: [--one, --two]
  env: {A: a, B: b}
hats:
  planner:
    triggers: [plan.start]
    publishes: [plan.done]
    max_activations: 2
  builder:
    triggers: [build.start]
`

// Later files merge over earlier ones: mappings key by key, lists and
// single values replaced.
func TestLoadMerges(t *testing.T) {
	tests := []struct {
		name  string
		over  string // the second file
		check func(t *testing.T, c *config.Config)
	}{
		{
			name: "a scalar replaces, its siblings stay",
			over: "event_loop:\n  max_iterations: 3\n",
			check: func(t *testing.T, c *config.Config) {
				assert.Equal(t, 3, c.EventLoop.MaxIterations)
				assert.Equal(t, "base objective", c.EventLoop.Prompt)
				assert.Equal(t, []string{"a.done", "b.done"}, c.EventLoop.RequiredEvents)
			},
		},
		{
			name: "a list replaces",
			over: "event_loop:\n  required_events: [c.done]\ncli:\n  args: [--three]\n",
			check: func(t *testing.T, c *config.Config) {
				assert.Equal(t, []string{"c.done"}, c.EventLoop.RequiredEvents)
				assert.Equal(t, []string{"--three"}, c.CLI.Args)
			},
		},
		{
			name: "a map merges key by key",
			over: "cli:\n  env: {B: bb, C: c}\n",
			check: func(t *testing.T, c *config.Config) {
				assert.Equal(t, map[string]string{"A": "a", "B": "bb", "C": "c"}, c.CLI.Env)
			},
		},
		{
			name: "a hat merges key by key and keeps its place",
			over: "hats:\n  reviewer:\n    triggers: [review.start]\n  planner:\n    max_activations: 5\n",
			check: func(t *testing.T, c *config.Config) {
				require.Len(t, c.Hats, 3)
				assert.Equal(t, []string{"planner", "builder", "reviewer"}, []string{c.Hats[0].ID, c.Hats[1].ID, c.Hats[2].ID})
				assert.Equal(t, 5, c.Hats[0].MaxActivations)
				assert.Equal(t, []string{"plan.start"}, c.Hats[0].Triggers)
				assert.Equal(t, []string{"plan.done"}, c.Hats[0].Publishes)
			},
		},
		{
			name: "an empty section does not wipe the earlier one",
			over: "event_loop:\ncli:\n",
			check: func(t *testing.T, c *config.Config) {
				assert.Equal(t, 10, c.EventLoop.MaxIterations)
				assert.Equal(t, []string{"--one", "--two"}, c.CLI.Args)
			},
		},
		{
			name: "a mapping replaces a string",
			over: "hats:\n  builder:\n    backend: {backend: codex, model: o3}\n",
			check: func(t *testing.T, c *config.Config) {
				assert.Equal(t, &config.CLI{Backend: "codex", Model: "o3"}, c.Hats[1].Backend)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			base := writeFile(t, dir, "ralph.yml", mergeBase)
			over := writeFile(t, dir, "local.yml", tt.over)
			c, err := config.Load(base, over)
			require.NoError(t, err)
			assert.Equal(t, over, c.Path)
			tt.check(t, c)
		})
	}
}

// YAML and JSON files merge with each other; a ralph.json's task replaces
// the ralph.yml's prompt because both are event_loop.prompt.
func TestLoadMergesYAMLAndJSON(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "ralph.yml", mergeBase)
	task := writeFile(t, dir, "ralph.json", `{"task": "json objective", "max_iterations": 4, "budget": {"max_tokens": 99}, "acceptance_criteria": [{"type": "file_exists", "path": "x"}]}`)
	c, err := config.Load(base, task)
	require.NoError(t, err)
	assert.Equal(t, "json objective", c.EventLoop.Prompt)
	assert.Equal(t, 4, c.EventLoop.MaxIterations)
	assert.Equal(t, int64(99), c.EventLoop.MaxTokens)
	assert.Equal(t, []string{"a.done", "b.done"}, c.EventLoop.RequiredEvents)
	assert.Equal(t, []criteria.Spec{{Type: "file_exists", Path: "x"}}, c.AcceptanceCriteria)
	assert.True(t, c.EventLoop.VerifyEveryIteration, "a ralph.json task is done when its criteria pass")
	assert.Len(t, c.Hats, 2)
}

// Problems name the file they are in, files in the order given; a trigger
// claimed in two files names both.
func TestLoadProblemsAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "ralph.yml", mergeBase+"  tester:\n    triggers: [test.start]\n")
	over := writeFile(t, dir, "local.yml", "event_loop:\n  max_iterations: -1\nhats:\n  tester:\n    triggers: [build.start]\n")
	_, err := config.Load(base, over)
	require.Error(t, err)
	golden.Assert(t, "testdata/across_files.golden", replaceDir(err.Error()+"\n", dir))
}

// The warning for ignored keys comes once per file that has them.
func TestLoadWarnsPerFile(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "ralph.yml", "core:\n  specs_dir: specs\nevent_loop:\n  persistent: true\n")
	over := writeFile(t, dir, "local.yml", "tasks:\n  enabled: false\n")
	c, err := config.Load(base, over)
	require.NoError(t, err)
	assert.Equal(t, []string{
		base + ": ignoring keys ralph does not implement: core (line 1), event_loop.persistent (line 4)",
		over + ": ignoring keys ralph does not implement: tasks (line 1)",
	}, c.Warnings)
}

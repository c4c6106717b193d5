package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

const collectionBase = `event_loop:
  prompt: Fix the export.
  max_iterations: 10
  max_cost_usd: 5
  required_events: [review.approved]
cli:
  backend: codex
gates:
  review.approved: [tests_pass]
hats:
  writer:
    triggers: [write.task]
    publishes: [write.done]
`

func hatIDs(c *config.Config) []string {
	var ids []string
	for _, h := range c.Hats {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestCollectionReplacesHatsAndKeepsItsRules(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "ralph.yml", collectionBase)
	col := config.Collection{Name: "tdd.yml", Data: []byte(`event_loop:
  completion_promise: CYCLE_DONE
  starting_event: cycle.start
  required_events: [test.green]
  max_iterations: 50
cli:
  backend: gemini
gates:
  test.green: [tests_pass]
hats:
  red:
    triggers: [cycle.start, refactor.done]
    publishes: [test.red, CYCLE_DONE]
  green:
    triggers: [test.red]
    publishes: [test.green]
`)}

	c, err := config.LoadWithCollection([]string{base}, col)

	require.NoError(t, err)
	assert.Equal(t, []string{"red", "green"}, hatIDs(c), "the collection's hats replace the config's")
	assert.Equal(t, "tdd.yml", c.Hats[0].File)
	el := c.EventLoop
	assert.Equal(t, "CYCLE_DONE", el.CompletionPromise)
	assert.Equal(t, "cycle.start", el.StartingEvent)
	assert.Equal(t, []string{"test.green"}, el.RequiredEvents)
	assert.Equal(t, 50, el.MaxIterations)
	assert.Equal(t, 5.0, el.MaxCostUSD, "what the collection does not set stays")
	assert.Equal(t, "Fix the export.", el.Prompt)
	assert.Equal(t, "codex", c.CLI.Backend, "the config chooses the backend")
	require.Len(t, c.Gates, 1, "the collection's gates replace the config's")
	assert.Equal(t, "test.green", c.Gates[0].Topic)
	assert.Equal(t, base, c.Path)
}

func TestCollectionWithoutBase(t *testing.T) {
	c, err := config.LoadWithCollection(nil, config.Collection{Name: "preset:x", Dir: "/work", Data: []byte(`cli:
  backend: gemini
event_loop:
  prompt_file: TASK.md
hats:
  solo:
    triggers: [task.start]
    publishes: [LOOP_COMPLETE]
`)})

	require.NoError(t, err)
	assert.Equal(t, "gemini", c.CLI.Backend, "with no config, the collection's cli applies")
	assert.Equal(t, 100, c.EventLoop.MaxIterations, "defaults")
	_, _, err = c.Objective(t.TempDir(), "", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/work/TASK.md", "a preset's prompt_file is looked for in Dir")
}

func TestCollectionKeepsBaseGatesWhenItHasNone(t *testing.T) {
	base := writeFile(t, t.TempDir(), "ralph.yml", collectionBase)
	c, err := config.LoadWithCollection([]string{base}, config.Collection{Name: "c.yml", Data: []byte(`hats:
  reviewer:
    triggers: [task.start]
    publishes: [review.approved]
`)})
	require.NoError(t, err)
	require.Len(t, c.Gates, 1)
	assert.Equal(t, "review.approved", c.Gates[0].Topic)
}

func TestCollectionProblems(t *testing.T) {
	base := writeFile(t, t.TempDir(), "ralph.yml", collectionBase)
	tests := []struct {
		name string
		data string
		want string
	}{
		{"no hats", "event_loop:\n  max_iterations: 5\n",
			"c.yml:1: a hat collection needs a hats: section (hint: pass -H a preset name (ralph init --list) or a file with hats: and, if needed, event_loop:)"},
		{"a bad key, with its line", "hats:\n  a:\n    trigers: [x]\n",
			`c.yml:3: unknown key "trigers" in hats.a; did you mean "triggers"? (hint: rename it to "triggers", or remove it)`},
		{"bad YAML", "hats: [\n", "c.yml:2: invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadWithCollection([]string{base}, config.Collection{Name: "c.yml", Data: []byte(tt.data)})
			var cerr *config.Error
			require.ErrorAs(t, err, &cerr)
			require.NotEmpty(t, cerr.Problems)
			assert.Contains(t, cerr.Problems[0].String(), tt.want)
		})
	}
}

// A hat collection written for ralph-orchestrator loads: its event_loop
// rules are kept, and the keys ralph does not implement are listed in one
// warning naming the collection.
func TestOrchestratorCollection(t *testing.T) {
	base := writeFile(t, t.TempDir(), "ralph.yml", collectionBase)
	col := config.Collection{Name: "feature.yml", Data: []byte(`# A ralph-orchestrator hat collection.
event_loop:
  starting_event: "build.start"
  completion_promise: "LOOP_COMPLETE"
  required_events: ["validation.passed"]
  max_iterations: 100
  checkpoint_interval: 5
core:
  scratchpad: ".agent/scratchpad.md"
hats:
  planner:
    name: "📋 Planner"
    triggers: ["build.start"]
    publishes: ["tasks.ready"]
    default_publishes: "tasks.ready"
    instructions: |
      Break the objective into tasks.
  builder:
    name: "⚙️ Builder"
    triggers: ["tasks.ready", "validation.failed"]
    publishes: ["implementation.ready"]
    instructions: Build one task.
    extra_instructions: ["Run the tests."]
  validator:
    name: "✅ Validator"
    triggers: ["implementation.ready"]
    publishes: ["validation.passed", "validation.failed", "LOOP_COMPLETE"]
    instructions: Validate.
`)}

	c, err := config.LoadWithCollection([]string{base}, col)

	require.NoError(t, err)
	assert.Equal(t, []string{"planner", "builder", "validator"}, hatIDs(c))
	assert.Equal(t, "build.start", c.EventLoop.StartingEvent)
	assert.Equal(t, []string{"validation.passed"}, c.EventLoop.RequiredEvents)
	assert.Equal(t, 100, c.EventLoop.MaxIterations)
	assert.Equal(t, []string{"feature.yml: ignoring keys ralph does not implement: " +
		"event_loop.checkpoint_interval (line 7), core (line 8), hats.builder.extra_instructions (line 23)"}, c.Warnings)
}

// The project's acceptance criteria are the config's: a preset's apply
// only when the config has none.
func TestCollectionKeepsTheConfigsAcceptanceCriteria(t *testing.T) {
	col := config.Collection{Name: "c.yml", Data: []byte(`acceptance_criteria: [tests_pass]
hats:
  solo:
    triggers: [task.start]
    publishes: [LOOP_COMPLETE]
`)}
	base := writeFile(t, t.TempDir(), "ralph.yml", collectionBase+"acceptance_criteria:\n  - {type: file_exists, path: REPORT.md}\n")
	c, err := config.LoadWithCollection([]string{base}, col)
	require.NoError(t, err)
	require.Len(t, c.AcceptanceCriteria, 1)
	assert.Equal(t, "file_exists", c.AcceptanceCriteria[0].Type, "the config's criteria stay")

	c, err = config.LoadWithCollection([]string{writeFile(t, t.TempDir(), "ralph.yml", collectionBase)}, col)
	require.NoError(t, err)
	require.Len(t, c.AcceptanceCriteria, 1)
	assert.Equal(t, "tests_pass", c.AcceptanceCriteria[0].Type, "a config without criteria takes the collection's")
}

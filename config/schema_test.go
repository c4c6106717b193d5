package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/internal/jsonschema"
)

// schemaFile is the schema committed at the repository root, where the
// presets' $schema URL points.
const schemaFile = "../ralph.schema.json"

func TestSchemaFileInSync(t *testing.T) {
	got := config.JSONSchema()
	if golden.Updating() {
		require.NoError(t, os.WriteFile(schemaFile, got, 0o644))
		return
	}
	want, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got),
		"ralph.schema.json is out of date: run go test ./config/ -run TestSchemaFileInSync -update (or make golden)")
	assert.True(t, json.Valid(got))
	assert.Equal(t, examples.SchemaURL, config.SchemaURL, "the presets point at the published schema")
}

func schemaErrors(t *testing.T, data []byte) []string {
	t.Helper()
	s, err := jsonschema.Parse(config.JSONSchema())
	require.NoError(t, err)
	var doc any
	require.NoError(t, yaml.Unmarshal(data, &doc))
	return s.Validate(doc)
}

// The schema accepts every config ralph ships, and ralph-orchestrator's.
func TestSchemaValidatesShippedConfigs(t *testing.T) {
	for _, p := range examples.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			assert.Empty(t, schemaErrors(t, p.Data))
		})
	}
	for _, path := range []string{"../ralph.yml", "../examples/demo/ralph.yml", "testdata/orchestrator.yml", "testdata/ralph_task.json"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Empty(t, schemaErrors(t, data))
		})
	}
}

func TestSchemaRejects(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"a misspelt top-level key", "hat:\n  a: {triggers: [x]}\n",
			[]string{`$.hat: unknown key "hat"; known keys: ` + topKeys}},
		{"a misspelt event_loop key", "event_loop:\n  max_iteration: 5\n",
			[]string{`$.event_loop.max_iteration: unknown key "max_iteration"; known keys: ` + eventLoopKeys}},
		{"a misspelt hat key", "hats:\n  builder:\n    trigger: [build.task]\n",
			[]string{`$.hats.builder.trigger: unknown key "trigger"; known keys: ` + hatKeys}},
		{"a misspelt criterion key", "acceptance_criteria:\n  - type: file_exists\n    file: out.txt\n",
			[]string{`$.acceptance_criteria[0].file: unknown key "file"; known keys: baseline, command, exit_code, name, path, regex, text, timeout_seconds, type`}},
		{"an unknown backend", "cli:\n  backend: cluade\n",
			[]string{`$.cli.backend: "cluade" is not one of ["claude","codex","gemini","opencode","pi","qwen","copilot","kiro","amp","cursor","command","auto","custom"]`}},
		{"an unknown criterion in a gate", "gates:\n  build.done: [test_pass]\n",
			[]string{`$.gates.build.done[0]: "test_pass" is not one of ["command_succeeds","commit_made","contains_text","file_contains","file_exists","git_clean","lint_clean","no_type_errors","tests_pass"]`}},
		{"zero iterations", "event_loop:\n  max_iterations: 0\n",
			[]string{"$.event_loop.max_iterations: 0 is less than the minimum 1"}},
		{"a bad hat id", "hats:\n  my hat: {triggers: x}\n",
			[]string{`$.hats.my hat: "my hat" does not match ^[A-Za-z0-9][A-Za-z0-9_-]*$`}},
		{"triggers as a number", "hats:\n  a: {triggers: 3}\n",
			[]string{"$.hats.a.triggers: expected string, got integer"}},
		{"an unknown sandbox mode", "sandbox:\n  mode: landlok\n",
			[]string{`$.sandbox.mode: "landlok" is not one of ["off","auto","landlock","bwrap","seatbelt"]`}},
		{"an unknown network in a hat's sandbox", "hats:\n  a:\n    sandbox: {network: none}\n",
			[]string{`$.hats.a.sandbox.network: "none" is not one of ["allow","deny"]`}},
		{"a misspelt key of autopilot.sandbox", "autopilot:\n  sandbox: {denyread: [x]}\n",
			[]string{`$.autopilot.sandbox.denyread: unknown key "denyread"; known keys: deny_read, mode, network, write`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, schemaErrors(t, []byte(tt.yaml)))
		})
	}
}

const (
	topKeys       = "RObot, _suppress_warnings, acceptance_criteria, adapters, agent, agent_priority, archive_prompts, autopilot, budget, chains, cli, completion_promise, core, enable_metrics, event_loop, events, features, gates, hats, hooks, human, max_cost, max_iterations, max_runtime, max_tokens, memories, pricing, prompt_file, redact, retry_delay, sandbox, skills, task, tasks, tui, verbose"
	eventLoopKeys = "cancellation_promise, checkpoint_interval, completion_confirmations, completion_promise, context_window_tokens, cooldown_delay_seconds, cost_per_day, cost_per_hour, enforce_hat_scope, idle_timeout_seconds, idle_timeout_secs, iteration_timeout_seconds, kill_grace_seconds, max_activity_bytes, max_consecutive_failures, max_cost_usd, max_iterations, max_output_line_bytes, max_output_text_bytes, max_raw_output_bytes, max_runtime_seconds, max_tokens, mutation_score_warn_threshold, persistent, prompt, prompt_file, rate_limit_max_wait_seconds, required_events, starting_event, starting_hat, stuck_threshold, tokens_per_day, tokens_per_hour, verify_every_iteration"
	hatKeys       = "aggregate, args, backend, backend_args, concurrency, default_publishes, description, disallowed_tools, extra_instructions, gates, instructions, max_activations, name, publishes, sandbox, scratchpad, timeout, triggers"
)

package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/internal/golden"
)

// The event loop's defaults are pinned by ralph.schema.json, which shows
// them to editors and which TestSchemaFileInSync keeps equal to Default().
func TestDefault(t *testing.T) {
	c := config.Default()
	assert.Equal(t, config.CLI{Backend: "claude"}, c.CLI)
	assert.Empty(t, c.Hats)
	assert.Empty(t, c.Warnings)
}

// A file that sets one thing gets the defaults for everything else.
func TestLoadBytesKeepsDefaults(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("event_loop:\n  prompt: build it\n"))
	require.NoError(t, err)
	want := config.Default().EventLoop
	want.Prompt = "build it"
	assert.Equal(t, want, c.EventLoop)
	assert.Equal(t, config.CLI{Backend: "claude"}, c.CLI)
	assert.Equal(t, "ralph.yml", c.Path)
}

func TestLoadBytesEventLoop(t *testing.T) {
	data := `event_loop:
  prompt: build it
  prompt_file: TASK.md
  completion_promise: all.done
  starting_event: work.start
  max_iterations: 7
  max_runtime_seconds: 60
  max_cost_usd: 2.5
  max_consecutive_failures: 0
  cooldown_delay_seconds: 3
  required_events: [review.passed, tests.passed]
  cancellation_promise: loop.cancel
  enforce_hat_scope: true
  completion_confirmations: 1
  iteration_timeout_seconds: 900
  idle_timeout_seconds: 0
  kill_grace_seconds: 2
  max_output_line_bytes: 65536
  max_output_text_bytes: 4096
  max_activity_bytes: 0
  max_raw_output_bytes: 5000000000
  max_tokens: 500000
  stuck_threshold: 4
  rate_limit_max_wait_seconds: 120
`
	c, err := config.LoadBytes("ralph.yml", []byte(data))
	require.NoError(t, err)
	assert.Equal(t, config.EventLoop{
		Prompt:                  "build it",
		PromptFile:              "TASK.md",
		CompletionPromise:       "all.done",
		StartingEvent:           "work.start",
		MaxIterations:           7,
		MaxRuntimeSeconds:       60,
		MaxCostUSD:              2.5,
		MaxConsecutiveFailures:  0,
		CooldownDelaySeconds:    3,
		RequiredEvents:          []string{"review.passed", "tests.passed"},
		CancellationPromise:     "loop.cancel",
		EnforceHatScope:         true,
		CompletionConfirmations: 1,
		IterationTimeoutSeconds: 900,
		IdleTimeoutSeconds:      0,
		KillGraceSeconds:        2,
		MaxOutputLineBytes:      65536,
		MaxOutputTextBytes:      4096,
		MaxActivityBytes:        0,
		MaxRawOutputBytes:       5000000000,
		MaxTokens:               500000,
		StuckThreshold:          4,
		RateLimitMaxWaitSeconds: 120,
	}, c.EventLoop)
}

func TestLoadBytesCLI(t *testing.T) {
	tests := []struct {
		name string
		data string
		want config.CLI
	}{
		{
			name: "every key",
			data: "cli:\n  backend: command\n  command: ./agent.sh\n  args: [--fast, 3]\n  prompt_mode: stdin\n  prompt_flag: -p\n  env: {PORT: 8080, DEBUG: true, EMPTY: }\n  model: o3\n",
			want: config.CLI{Backend: "command", Command: "./agent.sh", Args: []string{"--fast", "3"}, PromptMode: "stdin",
				PromptFlag: "-p", Env: map[string]string{"PORT": "8080", "DEBUG": "true", "EMPTY": ""}, Model: "o3"},
		},
		{
			name: "custom is command",
			data: "cli:\n  backend: custom\n  command: ./agent.sh\n",
			want: config.CLI{Backend: "command", Command: "./agent.sh"},
		},
		{
			name: "empty section keeps the default",
			data: "cli:\n",
			want: config.CLI{Backend: "claude"},
		},
		{
			name: "v1 agent key",
			data: "agent: gemini\n",
			want: config.CLI{Backend: "gemini"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.CLI)
		})
	}
}

func TestLoadBytesHats(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []config.Hat
	}{
		{
			name: "triggers as a string",
			data: "hats:\n  builder:\n    triggers: build.start\n",
			want: []config.Hat{{ID: "builder", Name: "builder", Triggers: []string{"build.start"}, Line: 2, File: "ralph.yml"}},
		},
		{
			name: "triggers as a list",
			data: "hats:\n  builder:\n    triggers: [build.start, build.retry]\n",
			want: []config.Hat{{ID: "builder", Name: "builder", Triggers: []string{"build.start", "build.retry"}, Line: 2, File: "ralph.yml"}},
		},
		{
			name: "every key, in file order",
			data: `hats:
  reviewer:
    name: Reviewer
    description: reviews
    triggers: [review.*]
    publishes: review.passed
    instructions: |
      Look hard.
    default_publishes: review.passed
    max_activations: 3
  builder:
    triggers: [build.start]
`,
			want: []config.Hat{
				{ID: "reviewer", Name: "Reviewer", Description: "reviews", Triggers: []string{"review.*"},
					Publishes: []string{"review.passed"}, Instructions: "Look hard.\n", DefaultPublishes: "review.passed",
					MaxActivations: 3, Line: 2, File: "ralph.yml"},
				{ID: "builder", Name: "builder", Triggers: []string{"build.start"}, Line: 11, File: "ralph.yml"},
			},
		},
		{
			name: "one hat twice on its own trigger is fine",
			data: "hats:\n  builder:\n    triggers: [build.start, build.start]\n",
			want: []config.Hat{{ID: "builder", Name: "builder", Triggers: []string{"build.start", "build.start"}, Line: 2, File: "ralph.yml"}},
		},
		{
			name: "an empty hat",
			data: "hats:\n  idle:\n",
			want: []config.Hat{{ID: "idle", Name: "idle", Line: 2, File: "ralph.yml"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.Hats)
		})
	}
}

func TestLoadBytesHatBackend(t *testing.T) {
	const cli = "cli:\n  backend: claude\n  model: opus\n  args: [--verbose]\n  env: {A: a, B: b}\n"
	tests := []struct {
		name string
		hat  string
		want *config.CLI
	}{
		{
			name: "none uses cli",
			hat:  "triggers: [x]",
			want: nil,
		},
		{
			name: "a name is that CLI alone",
			hat:  "backend: codex",
			want: &config.CLI{Backend: "codex"},
		},
		{
			name: "a mapping with backend is used as written",
			hat:  "backend: {backend: gemini, model: flash}",
			want: &config.CLI{Backend: "gemini", Model: "flash"},
		},
		{
			name: "ralph-orchestrator's type is backend",
			hat:  "backend: {type: kiro, args: [--agent, x]}",
			want: &config.CLI{Backend: "kiro", Args: []string{"--agent", "x"}},
		},
		{
			name: "a mapping without backend overrides cli",
			hat:  "backend: {model: sonnet, env: {B: bb, C: c}}",
			want: &config.CLI{Backend: "claude", Model: "sonnet", Args: []string{"--verbose"},
				Env: map[string]string{"A": "a", "B": "bb", "C": "c"}},
		},
		{
			name: "name: names the CLI",
			hat:  "backend: {name: pi, model: fake-model, args: [--thinking, low]}",
			want: &config.CLI{Backend: "pi", Model: "fake-model", Args: []string{"--thinking", "low"}},
		},
		{
			name: "a custom command",
			hat:  "backend: {backend: custom, command: ./review.sh, prompt_mode: stdin}",
			want: &config.CLI{Backend: "command", Command: "./review.sh", PromptMode: "stdin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(cli+"hats:\n  builder:\n    "+tt.hat+"\n"))
			require.NoError(t, err)
			require.Len(t, c.Hats, 1)
			assert.Equal(t, tt.want, c.Hats[0].Backend)
		})
	}
}

func TestLoadBytesCLIBackendMapping(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(
		"cli:\n  backend: {name: codex, model: gpt-5.5, args: [--x], env: {K: v}, command: /opt/codex}\n"))
	require.NoError(t, err)
	assert.Equal(t, config.CLI{Backend: "codex", Model: "gpt-5.5", Args: []string{"--x"},
		Env: map[string]string{"K": "v"}, Command: "/opt/codex"}, c.CLI)

	_, err = config.LoadBytes("ralph.yml", []byte("cli:\n  backend: {name: codx}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ralph.yml:2: cli.backend.name: unknown backend "codx"; did you mean "codex"?`)
}

// A hat's overriding backend must not share cli's slices or map.
func TestLoadBytesHatBackendCopiesCLI(t *testing.T) {
	data := "cli:\n  args: [--verbose]\n  env: {A: a}\nhats:\n  builder:\n    backend: {model: x}\n"
	c, err := config.LoadBytes("ralph.yml", []byte(data))
	require.NoError(t, err)
	c.Hats[0].Backend.Args[0] = "changed"
	c.Hats[0].Backend.Env["A"] = "changed"
	assert.Equal(t, []string{"--verbose"}, c.CLI.Args)
	assert.Equal(t, map[string]string{"A": "a"}, c.CLI.Env)
}

func TestLoadBytesYAMLFeatures(t *testing.T) {
	tests := []struct {
		name string
		data string
		want config.EventLoop
	}{
		{
			name: "anchors held by an underscore key",
			data: "_limits: &limits 42\nevent_loop:\n  max_iterations: *limits\n",
			want: withEventLoop(func(el *config.EventLoop) { el.MaxIterations = 42 }),
		},
		{
			name: "merge keys under the mapping's own keys",
			data: "_base: &base {max_iterations: 5, max_runtime_seconds: 60}\nevent_loop:\n  <<: *base\n  max_iterations: 9\n",
			want: withEventLoop(func(el *config.EventLoop) { el.MaxIterations, el.MaxRuntimeSeconds = 9, 60 }),
		},
		{
			name: "flat keys of ralph-orchestrator v1",
			data: "prompt_file: SPEC.md\ncompletion_promise: DONE\nmax_iterations: 5\nmax_runtime: 60\nmax_cost: 1.5\n",
			want: withEventLoop(func(el *config.EventLoop) {
				el.PromptFile, el.CompletionPromise, el.MaxIterations, el.MaxRuntimeSeconds, el.MaxCostUSD = "SPEC.md", "DONE", 5, 60, 1.5
			}),
		},
		{
			name: "a flat key next to its section",
			data: "max_iterations: 5\nevent_loop:\n  prompt: x\n",
			want: withEventLoop(func(el *config.EventLoop) { el.Prompt, el.MaxIterations = "x", 5 }),
		},
		{
			name: "a single required event",
			data: "event_loop:\n  required_events: review.passed\n",
			want: withEventLoop(func(el *config.EventLoop) { el.RequiredEvents = []string{"review.passed"} }),
		},
		{
			name: "an empty cancellation promise",
			data: "event_loop:\n  cancellation_promise: \"\"\n",
			want: withEventLoop(func(*config.EventLoop) {}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.EventLoop)
		})
	}
}

// withEventLoop is the default event loop changed by set.
func withEventLoop(set func(*config.EventLoop)) config.EventLoop {
	el := config.Default().EventLoop
	set(&el)
	return el
}

// A ralph.json task file: task is the objective, budget.max_tokens
// the token limit, acceptance_criteria kept raw for the criteria work.
func TestLoadRalphJSONTaskFile(t *testing.T) {
	c, err := config.Load(filepath.Join("testdata", "ralph_task.json"))
	require.NoError(t, err)
	assert.Equal(t, withEventLoop(func(el *config.EventLoop) {
		el.Prompt = "Create a hello.txt file with content 'Hello from Ralph'"
		el.MaxIterations = 3
		el.MaxTokens = 10000
		el.VerifyEveryIteration = true
	}), c.EventLoop)
	assert.Empty(t, c.Warnings)
	golden.Assert(t, "testdata/ralph_task.golden", dump(t, c, ""))

	text, source, err := c.Objective(t.TempDir(), "", "")
	require.NoError(t, err)
	assert.Equal(t, "Create a hello.txt file with content 'Hello from Ralph'", text)
	assert.Equal(t, "task (testdata/ralph_task.json:2)", source)
}

// A ralph-orchestrator config in the shape of its presets loads, with one
// warning that lists what ralph ignores.
func TestLoadOrchestratorConfig(t *testing.T) {
	c, err := config.Load(filepath.Join("testdata", "orchestrator.yml"))
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, "testdata/orchestrator.yml: ignoring keys ralph does not implement: "+
		"event_loop.checkpoint_interval (line 15), event_loop.persistent (line 16), cli.default_mode (line 21), "+
		"core (line 23), memories.inject (line 32), tasks (line 35), hooks (line 38), hats.critic.extra_instructions (line 80), "+
		"RObot (line 83), features (line 86), verbose (line 89)", c.Warnings[0])
	golden.Assert(t, "testdata/orchestrator.golden", dump(t, c, ""))
}

func TestLoadBytesWarnsOnEveryOrchestratorKey(t *testing.T) {
	data := `core: {}
events: {}
agent_priority: [claude]
verbose: true
archive_prompts: false
enable_metrics: false
max_tokens: 1000
retry_delay: 2
adapters: {}
_suppress_warnings: true
tui: {}
memories: {inject: auto, filter: {}}
tasks: {}
hooks: {}
skills: {}
features: {}
RObot: {}
event_loop:
  checkpoint_interval: 5
  starting_hat: planner
  mutation_score_warn_threshold: 80
  persistent: true
  context_window_tokens: 200000
  idle_timeout_secs: 30
cli:
  default_mode: autonomous
  idle_timeout_secs: 30
hats:
  builder:
    extra_instructions: [x]
    backend_args: [--x]
    args: [--y]
    scratchpad: s.md
    backend: {type: kiro, agent: reviewer}
`
	c, err := config.LoadBytes("ralph.yml", []byte(data))
	require.NoError(t, err)
	golden.Assert(t, "testdata/orchestrator_keys.golden", c.Warnings[0]+"\n")
	assert.Len(t, c.Warnings, 1)
}

func TestHatList(t *testing.T) {
	data := "hats:\n  builder:\n    name: Builder\n    description: builds\n    triggers: [build.start]\n" +
		"    publishes: [build.done]\n    instructions: go\n    default_publishes: build.done\n    max_activations: 2\n" +
		"    backend: codex\n  tester:\n    triggers: test.start\n"
	c, err := config.LoadBytes("ralph.yml", []byte(data))
	require.NoError(t, err)
	list := c.HatList()
	assert.Equal(t, []hats.Hat{
		{ID: "builder", Name: "Builder", Description: "builds", Triggers: []string{"build.start"},
			Publishes: []string{"build.done"}, Instructions: "go", DefaultPublishes: "build.done", MaxActivations: 2},
		{ID: "tester", Name: "tester", Triggers: []string{"test.start"}, Publishes: nil},
	}, list)
	list[0].Triggers[0] = "changed"
	assert.Equal(t, "build.start", c.Hats[0].Triggers[0], "HatList copies the lists")
}

// writeFile writes data to dir/name, making its directories, and returns
// its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	gittest.WriteFile(t, dir, name, data)
	return filepath.Join(dir, name)
}

func TestLoadBytesRedact(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("redact: [STRIPE_LIVE, DATABASE_URL]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"STRIPE_LIVE", "DATABASE_URL"}, c.Redact)

	c, err = config.LoadBytes("ralph.yml", []byte("redact: DATABASE_URL\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"DATABASE_URL"}, c.Redact, "one name alone")

	_, err = config.LoadBytes("ralph.yml", []byte("memories: {enabled: true}\nredact:\n  - OK_NAME\n  - $DATABASE_URL\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ralph.yml:4")
	assert.Contains(t, err.Error(), `redact: "$DATABASE_URL" is not an environment variable name`)
	var list *config.Error
	require.ErrorAs(t, err, &list)
	assert.Contains(t, list.Hint(), "without $")
}
func TestLoadLayersMergesLikeFilesAndKeepsRelativeCommands(t *testing.T) {
	base := config.Layer{Name: "ralph.yml", Data: []byte("cli:\n  backend: command\n  command: ./agent.sh\nevent_loop:\n  max_iterations: 7\n")}
	over := config.Layer{Name: "task.yml", Data: []byte("acceptance_criteria:\n  - {type: command_succeeds, command: 'true'}\n")}
	cfg, err := config.LoadLayers(base, over)
	require.NoError(t, err)
	assert.Equal(t, 7, cfg.EventLoop.MaxIterations)
	assert.Len(t, cfg.AcceptanceCriteria, 1)
	assert.Equal(t, []string{"./agent.sh"}, cfg.RelativeCommands())

	_, err = config.LoadLayers(base, config.Layer{Name: "task.yml", Data: []byte("bogus: 1\n")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task.yml:1")
	assert.Contains(t, err.Error(), "bogus")
}

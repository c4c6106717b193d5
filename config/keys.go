package config

// Constant tables: backend names and the keys of ralph-orchestrator's
// ralph.yml that ralph accepts without implementing.

// backendNames are the values cli.backend accepts, in the order the hint
// lists them. "custom" is read as "command" (ralph-orchestrator's name).
var backendNames = []string{
	"claude", "codex", "gemini", "opencode", "pi", "qwen", "copilot",
	"kiro", "amp", "cursor", "command", "auto",
}

// AgentNames are the backends that are an agent CLI ralph knows: cli.backend's
// values without command (a program cli.command names) and auto (ralph's
// pick). A task names its agent by one of these (the autopilot), where
// nothing but the name comes with it.
func AgentNames() []string {
	var out []string
	for _, n := range backendNames {
		if n != "command" && n != "auto" {
			out = append(out, n)
		}
	}
	return out
}

// backendAliases maps other names for a backend to ralph's.
var backendAliases = map[string]string{"custom": "command"}

// Keys of ralph-orchestrator's config that ralph does not implement. A file
// written for ralph-orchestrator (its presets included) must load, so these
// are accepted with one warning per file that lists them, instead of being
// rejected as unknown.
//
// Taken from ralph-orchestrator's config structs (RalphConfig,
// EventLoopConfig, CliConfig, HatConfig, HatBackend) in
// mikeyobrien/ralph-orchestrator crates/ralph-core/src/config.rs, and from
// its presets (checkpoint_interval appears only there). Its v1 flat keys
// (agent, prompt_file, completion_promise, max_iterations, max_runtime,
// max_cost) are not here: ralph implements them as aliases (normalize.go).
var (
	orchestratorTopKeys = []string{
		"core", "events", "agent_priority", "verbose", "archive_prompts",
		"enable_metrics", "max_tokens", "retry_delay", "adapters",
		"_suppress_warnings", "tui", "tasks", "hooks", "skills",
		"features", "RObot",
	}
	orchestratorEventLoopKeys = []string{
		"checkpoint_interval", "starting_hat", "mutation_score_warn_threshold",
		"persistent", "context_window_tokens", "idle_timeout_secs",
	}
	orchestratorCLIKeys = []string{"default_mode", "idle_timeout_secs"}
	orchestratorHatKeys = []string{
		"extra_instructions", "backend_args", "args", "scratchpad",
	}
	// orchestratorMemoriesKeys: ralph injects memories by relevance within
	// budget; it has no modes or filters.
	orchestratorMemoriesKeys = []string{"inject", "filter"}
	// orchestratorHatBackendKeys: a hat's backend may name a Kiro agent.
	orchestratorHatBackendKeys = []string{"agent"}
)

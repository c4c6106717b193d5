package config

// schemaDocs describes each key for the JSON Schema, by path: a section
// ("event_loop"), or a section and key ("event_loop.prompt"); a hat's keys
// are under "hat", a criterion's under "criterion". A test requires one for
// every key the loader implements.
var schemaDocs = map[string]string{
	"event_loop":          "How the loop runs: the objective, the topics that start and end it, and its limits.",
	"cli":                 "The agent CLI every hat runs, unless the hat names its own backend.",
	"hats":                "The roles the agent wears, by id. Each triggers on topics and publishes topics; ralph routes each event to the first hat in file order whose trigger matches, else to its built-in coordinator.",
	"acceptance_criteria": "Checks ralph runs itself before a completion claim counts: a criterion name (tests_pass) or a mapping ({type: file_exists, path: REPORT.md}), or a list of them.",
	"gates":               "Topic pattern → the criteria its events must pass before ralph accepts them; a failing event becomes <topic>.blocked, sent back to the hat that published it with the evidence.",
	"memories":            "Long-term memories (ralph memory) injected into prompts.",
	"redact":              "Environment variables whose values ralph replaces with [redacted:NAME] in everything it writes, besides those whose names contain KEY, TOKEN, SECRET or PASSWORD.",

	"event_loop.prompt":                      "The objective, inline. Overrides prompt_file; -p and -P override both.",
	"event_loop.prompt_file":                 "File holding the objective, relative to the config file (then to the workspace).",
	"event_loop.completion_promise":          "The topic that claims the whole objective is done.",
	"event_loop.starting_event":              "The topic ralph publishes to start a run; the hat that triggers on it goes first (the coordinator when none does).",
	"event_loop.max_iterations":              "Stop (exit 2) after this many iterations.",
	"event_loop.max_runtime_seconds":         "Stop (exit 2) after this many seconds; 0: no limit.",
	"event_loop.max_cost_usd":                "Stop (exit 2) once the agents' reported cost reaches this many US dollars; 0: no limit.",
	"event_loop.max_consecutive_failures":    "Stop (exit 1) after this many failed iterations in a row; 0: no limit.",
	"event_loop.cooldown_delay_seconds":      "Pause between iterations, in seconds.",
	"event_loop.required_events":             "Topics that must have been published before a completion claim is accepted.",
	"event_loop.cancellation_promise":        "A topic that ends the run as cancelled (exit 0); none by default.",
	"event_loop.enforce_hat_scope":           "Drop events a hat publishes outside its publishes list.",
	"event_loop.completion_confirmations":    "2: a fresh agent must confirm a completion claim; 1: the first claim counts.",
	"event_loop.iteration_timeout_seconds":   "Kill an iteration's agent after this many seconds; 0: no limit.",
	"event_loop.idle_timeout_seconds":        "Kill an agent that has printed nothing for this many seconds; 0: no limit.",
	"event_loop.kill_grace_seconds":          "Seconds between SIGTERM and SIGKILL when an agent is stopped.",
	"event_loop.max_tokens":                  "Stop (exit 2) once input plus output tokens reach this; 0: no limit.",
	"event_loop.stuck_threshold":             "Stop (exit 1) after this many iterations without progress; 0: never.",
	"event_loop.rate_limit_max_wait_seconds": "How long to wait for an agent's rate limit to lift before giving up; 0: do not wait.",
	"event_loop.verify_every_iteration":      "Check acceptance_criteria after every iteration and complete as soon as they pass, without a claim.",

	"cli.backend":     "The agent CLI: claude, codex, gemini, opencode, pi, qwen, copilot, kiro, amp, cursor; command (alias custom) for any program; auto for the first one installed.",
	"cli.command":     "The program to run, for backend command, or the binary of a named CLI. A relative path (./agent.sh) is relative to this config file's directory; a bare name is looked up on PATH.",
	"cli.args":        "Extra arguments for the agent CLI.",
	"cli.prompt_mode": "How the prompt reaches a command backend: as an argument (after prompt_flag) or on stdin.",
	"cli.prompt_flag": "The flag before the prompt argument, for prompt_mode arg.",
	"cli.env":         "Environment variables for the agent.",
	"cli.model":       "The model to ask the agent CLI for.",

	"hat":                   "One role: what wakes it (triggers), what it may publish, and what it is told to do.",
	"hat.name":              "Display name; defaults to the id.",
	"hat.description":       "One line on what the hat is for; shown to the agent and in ralph hats.",
	"hat.triggers":          "Topic patterns that route events to this hat: exact (build.done), or with * for one whole segment (build.*, *.done), or * alone for whatever no other hat takes.",
	"hat.publishes":         "Topics the hat may publish; the prompt tells it who receives each. Omit to let it publish anything.",
	"hat.instructions":      "What the hat does and what it publishes when.",
	"hat.default_publishes": "Topic published for the hat when its agent publishes nothing.",
	"hat.max_activations":   "How often the hat may run; then <id>.exhausted goes to the coordinator. 0: no bound.",
	"hat.backend":           "This hat's agent: a backend name, or a mapping like cli: (with backend: it replaces cli:, without it is laid over cli:).",
	"hat.gates":             "Gates for this hat's events, checked before the top-level gates.",

	"hat.backend.name": "The backend's name, as backend:.",
	"hat.backend.type": "The backend's name, as backend: (ralph-orchestrator's spelling).",

	"memories.enabled": "Inject memories into prompts.",
	"memories.budget":  "Most characters of memories injected into one prompt.",
	"memories.shared":  "Keep .ralph/agent/memories.md visible to git so it can be committed; the rest of .ralph/ is always ignored.",

	"criterion":                 "One check ralph runs itself.",
	"criterion.type":            "What to check: file_exists, file_contains, contains_text, command_succeeds, tests_pass, no_type_errors, lint_clean, git_clean, commit_made.",
	"criterion.name":            "Label in evidence and messages; defaults to the type and its main parameter.",
	"criterion.path":            "Workspace-relative file, for file_exists and file_contains.",
	"criterion.text":            "Text the file must contain (file_contains), or the agent's output (contains_text).",
	"criterion.regex":           "Regular expression the file must match (file_contains).",
	"criterion.command":         "Shell command to run in the workspace (command_succeeds; tests_pass, no_type_errors and lint_clean detect one when it is not set).",
	"criterion.exit_code":       "Exit status command_succeeds expects; default 0.",
	"criterion.timeout_seconds": "Bound on the check, in seconds.",
	"criterion.baseline":        "ignore: a failure that existed before the run started does not count.",

	"gate.criteria": "The criteria the event must pass.",
	"gate.evidence": "Text the event's payload must contain (ralph-orchestrator's evidence gates).",
}

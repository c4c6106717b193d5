package backends

import (
	"time"

	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/internal/sandbox"
)

// Options configure one backend: the cli: section of ralph.yml, or a hat's
// backend: override.
type Options struct {
	// Name is the CLI: claude, codex, gemini, opencode, pi, qwen, copilot,
	// kiro, amp, cursor, command (custom is an alias), or auto.
	Name string
	// Command overrides the binary (for command, it is the program to run).
	Command string
	// Args are appended to the CLI's own arguments.
	Args []string
	// Model maps to the CLI's model flag; empty keeps the CLI's default.
	Model string
	// PromptMode is "arg" or "stdin"; empty means the CLI's default.
	PromptMode string
	// PromptFlag goes before the prompt when it is passed as an argument.
	PromptFlag string
	// DisallowedTools are tools the agent may not use, in the CLI's own
	// names (and patterns, where the CLI has them), passed to the CLI's own
	// deny list (see denyTools). New refuses a non-empty list for a CLI
	// that has none.
	DisallowedTools []string
	// Env is added to the agent's environment.
	Env map[string]string
	// KillGrace is how long the agent's process group has between SIGTERM
	// and SIGKILL; zero means 10 seconds.
	KillGrace time.Duration
	// Limits bound what ralph keeps of each run's output; the zero value
	// is DefaultOutputLimits.
	Limits OutputLimits
	// Redactor hides secret values in everything the agent produces before
	// Run passes it on: the raw output, the activity and the result. Build
	// it from the environment the agent gets. Nil hides nothing.
	Redactor *redact.Redactor
	// Sandbox confines every run's agent (see internal/sandbox): its Mode
	// (resolved, never auto), Policy, Home and Launcher; each run fills in
	// the workspace and the CLI's own state. Nil, or a Mode of off, runs
	// the agent unconfined.
	Sandbox *sandbox.Agent
}

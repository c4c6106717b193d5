package backends

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/sandbox"
)

// stateSpec is what one CLI writes outside its workspace on every run:
// its settings, sessions, logs and caches. A confined agent may write these
// and nothing else of the home folder (see internal/sandbox).
type stateSpec func(e diagEnv) []string

// stateOf lists each CLI's state, where the CLI keeps it with ralph's
// environment: a variable that moves it (CODEX_HOME, PI_CODING_AGENT_DIR,
// …) wins, as it does for the CLI.
var stateOf = map[string]stateSpec{
	"claude": func(e diagEnv) []string {
		return []string{e.dir("CLAUDE_CONFIG_DIR", ".claude"), filepath.Join(e.home, ".claude.json"),
			filepath.Join(e.home, ".claude.json.backup"), e.dir("", ".cache", "claude"),
			e.dir("", ".local", "state", "claude"), e.dir("", ".local", "share", "claude")}
	},
	"codex": func(e diagEnv) []string { return []string{e.dir("CODEX_HOME", ".codex")} },
	"gemini": func(e diagEnv) []string {
		return []string{e.dir("GEMINI_CLI_HOME", ".gemini"), e.dir("", ".cache", "gemini")}
	},
	"opencode": func(e diagEnv) []string {
		return []string{filepath.Join(e.dir("XDG_CONFIG_HOME", ".config"), "opencode"),
			filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "opencode"),
			filepath.Join(e.dir("XDG_STATE_HOME", ".local", "state"), "opencode"),
			filepath.Join(e.dir("XDG_CACHE_HOME", ".cache"), "opencode")}
	},
	"pi":   func(e diagEnv) []string { return []string{e.dir("PI_CODING_AGENT_DIR", ".pi")} },
	"qwen": func(e diagEnv) []string { return []string{e.dir("", ".qwen")} },
	"copilot": func(e diagEnv) []string {
		// gh's login is copilot's last way to authenticate: its own, so
		// not hidden from it as it is from other agents.
		return []string{e.dir("COPILOT_HOME", ".copilot"), filepath.Join(e.dir("XDG_CONFIG_HOME", ".config"), "gh"),
			filepath.Join(e.dir("XDG_CACHE_HOME", ".cache"), "copilot")}
	},
	"kiro": func(e diagEnv) []string {
		return []string{filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "kiro-cli"), e.dir("", ".kiro")}
	},
	"amp": func(e diagEnv) []string {
		return []string{filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "amp"),
			filepath.Join(e.dir("XDG_CONFIG_HOME", ".config"), "amp"), filepath.Join(e.dir("XDG_CACHE_HOME", ".cache"), "amp")}
	},
	"cursor": func(e diagEnv) []string { return []string{e.dir("", ".cursor")} },
}

// confinement is run's sandbox: Options.Sandbox with the run's workspace,
// the CLI's state and write (more folders the run needs, such as a usage
// file's); nil when the agent runs unconfined.
func (b *Backend) confinement(run events.AgentRun, write ...string) *sandbox.Agent {
	if b.opts.Sandbox == nil || b.opts.Sandbox.Mode == sandbox.ModeOff {
		return nil
	}
	a := *b.opts.Sandbox
	a.Workspace = run.Dir
	if a.Workspace == "" {
		a.Workspace, _ = os.Getwd()
	}
	if a.Home == "" {
		a.Home, _ = os.UserHomeDir()
	}
	if state := stateOf[b.spec.name]; state != nil {
		env := diagEnv{extra: agentVars(b.opts.Env, run.Env), getenv: os.Getenv, home: a.Home}
		a.State = append(slices.Clip(a.State), state(env)...)
	}
	for _, w := range write {
		if w != "" {
			a.Write = append(slices.Clip(a.Write), w)
		}
	}
	return &a
}

// Sandbox describes how the agent is confined, for the iteration's record:
// "landlock", "bwrap, network deny", or "off" when a sandbox was asked
// for and the machine has none; "" when none was asked for.
func (b *Backend) Sandbox() string {
	if b.opts.Sandbox == nil {
		return ""
	}
	return b.opts.Sandbox.String()
}

// agentVars are the variables ralph adds to the agent's environment, later
// ones winning, as a map.
func agentVars(opts map[string]string, run []string) map[string]string {
	vars := maps.Clone(opts)
	if vars == nil {
		vars = map[string]string{}
	}
	for _, kv := range run {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

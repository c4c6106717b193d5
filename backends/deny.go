package backends

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Tools an agent may not use (Options.DisallowedTools) go to the CLI's own
// deny list: each CLI's file fills it in its args or env, and names it in
// cliSpec.denyTools. The names are the CLI's own (Claude Code's Bash,
// OpenCode's bash, Qwen Code's run_shell_command, …): ralph translates
// nothing, because no two CLIs name their tools alike and a deny list
// that missed a tool under a wrong name would fail open.

// NoDenyListError says a backend was given tools to deny by a CLI that
// has no way to deny them. Running the agent anyway would give it the
// tools the user took away, so it is a configuration problem.
type NoDenyListError struct {
	Backend string   // the CLI, e.g. "codex"
	Tools   []string // the tools it was asked to deny
}

func (e *NoDenyListError) Error() string {
	return fmt.Sprintf("%s cannot deny tools (disallowed_tools: %s): it has no deny list ralph can pass; use %s, or remove disallowed_tools",
		e.Backend, strings.Join(e.Tools, ", "), strings.Join(DenyingCLIs(), ", "))
}

// NewSetupError is err, from New, as a *SetupError whose hint is fix,
// unless err is a *NoDenyListError: another CLI, or no deny list, is its
// fix whatever the caller was making.
func NewSetupError(err error, fix string) *SetupError {
	var nd *NoDenyListError
	if errors.As(err, &nd) {
		return &SetupError{Err: err, Problem: fmt.Sprintf("%s cannot deny tools: it has no deny list ralph can pass disallowed_tools to", nd.Backend),
			Fix: fmt.Sprintf("run the hat on one that can (%s), or remove disallowed_tools (%s); docs/agent-clis.md says what each CLI can deny",
				strings.Join(DenyingCLIs(), ", "), strings.Join(nd.Tools, ", "))}
	}
	return &SetupError{Err: err, Fix: fix}
}

// DenyingCLIs are the CLIs that can deny tools, sorted.
func DenyingCLIs() []string {
	var out []string
	for name, s := range clis {
		if s.denyTools != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// DenyList names the deny list a CLI passes Options.DisallowedTools to
// (e.g. "--disallowedTools"), "" when it has none or is unknown.
func DenyList(name string) string {
	if s, ok := clis[name]; ok {
		return s.denyTools
	}
	return ""
}

// checkDeny refuses a deny list spec cannot pass on.
func checkDeny(spec *cliSpec, opts Options) error {
	if len(opts.DisallowedTools) == 0 || spec.denyTools != "" {
		return nil
	}
	return &NoDenyListError{Backend: spec.name, Tools: opts.DisallowedTools}
}

// denyArgs is flag followed by each tool as an argument of its own, for a
// CLI whose flag takes a variadic list; empty when there is nothing to
// deny. The caller puts a flag after it, so the list cannot swallow the
// user's arguments or the prompt.
func denyArgs(flag string, tools []string) []string {
	if len(tools) == 0 {
		return nil
	}
	return append([]string{flag}, tools...)
}

package criteria

import "time"

// Spec is one criterion as configured: in acceptance_criteria, in a gate,
// or in a seed-004 ralph.json. Type selects the check; the other fields are
// its parameters, each used by the types that say so.
type Spec struct {
	Type string `json:"type" yaml:"type"`
	// Name labels the criterion in evidence and messages; defaults to Type
	// plus its main parameter.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Path is a workspace-relative file (file_exists, file_contains).
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Text or Regex is what file_contains looks for.
	Text  string `json:"text,omitempty" yaml:"text,omitempty"`
	Regex string `json:"regex,omitempty" yaml:"regex,omitempty"`
	// Command is run with sh -c in the workspace (command_succeeds, and
	// tests_pass / no_type_errors / lint_clean when given).
	Command string `json:"command,omitempty" yaml:"command,omitempty"`
	// ExitCode is the status command_succeeds expects; nil means 0.
	ExitCode *int `json:"exit_code,omitempty" yaml:"exit_code,omitempty"`
	// Timeout bounds the check; zero means DefaultTimeout.
	Timeout time.Duration `json:"timeout,omitempty" yaml:"-"`
	// Baseline "ignore" lets a failure that existed before the run started
	// not block completion.
	Baseline string `json:"baseline,omitempty" yaml:"baseline,omitempty"`
}

// Result is the outcome of checking one criterion.
type Result struct {
	Spec   Spec
	Name   string
	Passed bool
	// Evidence is what shows why: the tail of the command's output, the
	// missing file, the pattern not found.
	Evidence string
	Duration time.Duration
}

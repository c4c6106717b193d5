package criteria

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
)

// The criterion types. contains_text is the ralph.json task file's name for
// file_contains (docs/architecture.md#ralphjson-task-files).
const (
	TypeFileExists      = "file_exists"
	TypeFileContains    = "file_contains"
	TypeContainsText    = "contains_text"
	TypeCommandSucceeds = "command_succeeds"
	TypeTestsPass       = "tests_pass"
	TypeNoTypeErrors    = "no_type_errors"
	TypeLintClean       = "lint_clean"
	TypeGitClean        = "git_clean"
	TypeCommitMade      = "commit_made"
)

// BaselineIgnore is the one value Spec.Baseline may take besides "".
const BaselineIgnore = "ignore"

// DefaultTimeout bounds a check whose Spec.Timeout is zero. Test suites
// are the slow case; five minutes fits most and still ends a hung one.
const DefaultTimeout = 5 * time.Minute

// Types lists the criterion types, sorted.
func Types() []string {
	return []string{
		TypeCommandSucceeds,
		TypeCommitMade,
		TypeContainsText,
		TypeFileContains,
		TypeFileExists,
		TypeGitClean,
		TypeLintClean,
		TypeNoTypeErrors,
		TypeTestsPass,
	}
}

// Spec is one criterion as configured: in acceptance_criteria, in a gate,
// or in a ralph.json task file. Type selects the check; the other fields are
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

// RunsCommand reports whether checking s runs a shell command: its own,
// or for tests_pass and no_type_errors without one, a command detected
// from the workspace's files (make test, npm test, …).
func (s Spec) RunsCommand() bool {
	switch s.Type {
	case TypeCommandSucceeds, TypeTestsPass, TypeNoTypeErrors, TypeLintClean:
		return true
	}
	return s.Command != ""
}

// Result is the outcome of checking one criterion.
type Result struct {
	Spec Spec
	// Name is Spec.Label(): the criterion as configured, so it stays the
	// same from check to check (the engine matches baseline results by it)
	// even when a detected command changes.
	Name   string
	Passed bool
	// Evidence is what shows why: the tail of the command's output, the
	// missing file, the pattern not found.
	Evidence string
	Duration time.Duration
	// Interrupted is set when the caller's context ended before the check
	// could finish (or start): the failure says nothing about the
	// workspace. A check that exceeded its own Timeout is not interrupted;
	// it failed.
	Interrupted bool
}

// labelParamMax bounds how much of a parameter a label shows, so a long
// script does not swamp a list of criteria.
const labelParamMax = 60

// Label names the criterion for people: Name when set, else the type and
// its main parameter, e.g. "file_exists hello.txt" or
// "tests_pass (go test ./...)".
func (s Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	if s.Type == "" {
		return "criterion"
	}
	switch s.Type {
	case TypeFileExists:
		return joinNonEmpty(s.Type, short(s.Path))
	case TypeFileContains, TypeContainsText:
		return joinNonEmpty(s.Type, short(s.Path), s.pattern())
	case TypeGitClean, TypeCommitMade:
		return s.Type
	}
	if s.Command == "" {
		return s.Type
	}
	label := s.Type + " (" + short(s.Command) + ")"
	if s.ExitCode != nil && *s.ExitCode != 0 {
		label += fmt.Sprintf(" exits %d", *s.ExitCode)
	}
	return label
}

// pattern is file_contains' pattern as a label shows it: text quoted,
// a regex between slashes.
func (s Spec) pattern() string {
	switch {
	case s.Regex != "":
		return "/" + short(s.Regex) + "/"
	case s.Text != "":
		return fmt.Sprintf("%q", short(s.Text))
	}
	return ""
}

func (s Spec) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// expectedExit is the status command_succeeds wants.
func (s Spec) expectedExit() int {
	if s.ExitCode != nil {
		return *s.ExitCode
	}
	return 0
}

// short puts s on one line and cuts it to labelParamMax runes.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= labelParamMax {
		return s
	}
	return string(r[:labelParamMax-1]) + "…"
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// Env is what a check needs to know about the run, beyond the workspace.
type Env struct {
	// RunStartCommit is HEAD when the run started, for commit_made; ""
	// when the workspace had no commit (or is not a repository).
	RunStartCommit string
	// ExtraEnv is added to ralph's own environment for commands
	// ("KEY=value"; later entries win).
	ExtraEnv []string
	// Sandbox, when set, confines the commands: they run what the agent
	// wrote (its tests, its scripts), so they get no more rights than
	// it had. Nil runs them with ralph's own.
	Sandbox Sandbox
	// Git is where the workspace's repository is when ralph made the
	// work tree (git.Pin); the zero value finds it from the workspace.
	Git git.Pin
	// BeforeGit, when set, is asked before a check runs git in the
	// workspace (git_clean, commit_made): an error fails the check, and
	// git does not run. A confined command before it could have changed
	// what git would run there; the engine keeps watch (git.Controls).
	BeforeGit func() error
}

// Sandbox confines a check's command as the agent whose work it checks is
// confined (internal/sandbox's Agent, with the check's workspace as its
// own, is one).
type Sandbox interface {
	// Confine rewrites cmd, not yet started, to run confined; cleanup
	// is called once it has exited.
	Confine(cmd *exec.Cmd) (cleanup func(), err error)
	// Denied finds, in the command's output, an access the sandbox
	// refused and says so in a sentence; "" when there is none.
	Denied(text string) string
}

package criteria

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/suggest"
)

// SpecError is a criterion configured wrongly: what is wrong and how to
// fix it. Validate, ValidateIn and FromName return it; errors.As finds it
// for a CLI that prints the hint on its own line.
type SpecError struct {
	// Criterion is the criterion's label, "" when it has none yet.
	Criterion string
	Problem   string
	Hint      string
}

func (e *SpecError) Error() string {
	msg := e.Problem
	if e.Criterion != "" {
		msg = fmt.Sprintf("criterion %q: %s", e.Criterion, e.Problem)
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Validate reports the first thing wrong with spec that can be seen
// without a workspace: an unknown type, a missing or malformed parameter,
// a relative path that climbs out of the workspace, a baseline other than
// "" or "ignore". An absolute path or a symlink can only be judged against
// a workspace; ValidateIn does that, and Check refuses them regardless.
func Validate(spec Spec) error {
	if err := validateType(spec); err != nil {
		return err
	}
	for _, check := range []func(Spec) *SpecError{validateParams, validateCommon} {
		if err := check(spec); err != nil {
			return err
		}
	}
	return nil
}

// ValidateIn is Validate plus the checks that need the workspace: an
// absolute path, or one leading through a symlink, must stay inside it.
func ValidateIn(workspace string, spec Spec) error {
	if err := Validate(spec); err != nil {
		return err
	}
	if !usesPath(spec.Type) {
		return nil
	}
	if err := checkWorkspace(workspace); err != nil {
		return err
	}
	if _, err := resolvePath(workspace, spec.Path); err != nil {
		return &SpecError{Criterion: spec.Label(), Problem: err.Error(), Hint: escapeHint}
	}
	return nil
}

const escapeHint = "criteria only look inside the workspace; use a path relative to its root"

func validateType(spec Spec) error {
	if spec.Type == "" {
		return &SpecError{Criterion: spec.Name, Problem: "type is missing",
			Hint: "set type to one of: " + strings.Join(Types(), ", ")}
	}
	if slices.Contains(Types(), spec.Type) {
		return nil
	}
	return &SpecError{Criterion: spec.Label(), Problem: fmt.Sprintf("unknown type %q", spec.Type),
		Hint: unknownHint(spec.Type)}
}

// unknownHint offers the nearest known type, or lists them all.
func unknownHint(name string) string {
	if s := suggest.Closest(name, Types()); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "the types are: " + strings.Join(Types(), ", ")
}

// validateParams checks the parameters the type requires.
func validateParams(spec Spec) *SpecError {
	switch spec.Type {
	case TypeFileExists:
		return validatePath(spec)
	case TypeFileContains, TypeContainsText:
		if err := validatePath(spec); err != nil {
			return err
		}
		return validatePattern(spec)
	case TypeCommandSucceeds:
		return requireCommand(spec, "set command to a shell command that exits 0 when the criterion holds")
	case TypeLintClean:
		return requireCommand(spec, `ralph cannot guess your linter: set command, e.g. "golangci-lint run" or "npx eslint ."`)
	}
	return nil
}

func validatePath(spec Spec) *SpecError {
	if spec.Path == "" {
		return &SpecError{Criterion: spec.Label(), Problem: "path is required",
			Hint: "set path to a file relative to the workspace, e.g. path: hello.txt"}
	}
	if climbsOut(spec.Path) {
		return &SpecError{Criterion: spec.Label(),
			Problem: fmt.Sprintf("path %q is outside the workspace", spec.Path), Hint: escapeHint}
	}
	return nil
}

// climbsOut reports a relative path whose ".." elements leave the
// directory it is relative to.
func climbsOut(path string) bool {
	if filepath.IsAbs(path) {
		return false
	}
	clean := filepath.Clean(path)
	return clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator))
}

func validatePattern(spec Spec) *SpecError {
	switch {
	case spec.Text == "" && spec.Regex == "":
		return &SpecError{Criterion: spec.Label(), Problem: "text or regex is required",
			Hint: "set text to the string the file must contain, or regex to a pattern it must match"}
	case spec.Text != "" && spec.Regex != "":
		return &SpecError{Criterion: spec.Label(), Problem: "both text and regex are set",
			Hint: "keep one of them"}
	case spec.Regex != "":
		// Compiled without the (?m) compilePattern adds, so the message quotes
		// only what the user wrote.
		if _, err := regexp.Compile(spec.Regex); err != nil {
			return &SpecError{Criterion: spec.Label(), Problem: fmt.Sprintf("regex %q: %v", spec.Regex, err),
				Hint: "write the pattern in Go's RE2 syntax (https://golang.org/s/re2syntax)"}
		}
	}
	return nil
}

func requireCommand(spec Spec, hint string) *SpecError {
	if strings.TrimSpace(spec.Command) == "" {
		return &SpecError{Criterion: spec.Label(), Problem: "command is required", Hint: hint}
	}
	return nil
}

// validateCommon checks the fields every type shares.
func validateCommon(spec Spec) *SpecError {
	switch {
	case spec.Baseline != "" && spec.Baseline != BaselineIgnore:
		return &SpecError{Criterion: spec.Label(), Problem: fmt.Sprintf("baseline %q is not supported", spec.Baseline),
			Hint: `use "ignore" (a failure that predates the run does not block), or leave it out`}
	case spec.Timeout < 0:
		return &SpecError{Criterion: spec.Label(), Problem: fmt.Sprintf("timeout %s is negative", spec.Timeout),
			Hint: fmt.Sprintf("leave it out for the default (%s), or set a positive one", DefaultTimeout)}
	case spec.ExitCode != nil && (*spec.ExitCode < 0 || *spec.ExitCode > 255):
		return &SpecError{Criterion: spec.Label(), Problem: fmt.Sprintf("exit_code %d is out of range", *spec.ExitCode),
			Hint: "a process exits with 0 to 255"}
	}
	return nil
}

func usesPath(typ string) bool {
	return typ == TypeFileExists || typ == TypeFileContains || typ == TypeContainsText
}

// FromName turns a bare criterion name, as gates list them (tests_pass,
// lint_clean, …), into a Spec of that type. Types that cannot mean
// anything without a path or a command (file_exists, file_contains,
// contains_text, command_succeeds) are refused. lint_clean is accepted
// although it needs a command: it is a conventional gate name, and its
// check then fails with evidence that says to set one.
func FromName(name string) (Spec, error) {
	name = strings.TrimSpace(name)
	if !slices.Contains(Types(), name) {
		return Spec{}, &SpecError{Problem: fmt.Sprintf("unknown criterion %q", name), Hint: unknownHint(name)}
	}
	switch name {
	case TypeFileExists, TypeFileContains, TypeContainsText, TypeCommandSucceeds:
		return Spec{}, &SpecError{Problem: fmt.Sprintf("criterion %q needs parameters, so it cannot be given by name alone", name),
			Hint: fmt.Sprintf("write it as a mapping, e.g. %s", example(name))}
	}
	return Spec{Type: name}, nil
}

func example(typ string) string {
	switch typ {
	case TypeCommandSucceeds:
		return "{type: command_succeeds, command: make build}"
	case TypeFileExists:
		return "{type: file_exists, path: hello.txt}"
	}
	return fmt.Sprintf("{type: %s, path: hello.txt, text: Hello}", typ)
}

package backends

import (
	"fmt"
	"strings"
)

// MissingBinaryError says an agent CLI cannot be run because its executable
// is not installed (or Options.Command names nothing executable). It is a
// configuration problem: retrying does not help.
type MissingBinaryError struct {
	Backend string // the backend name, e.g. "claude"
	Binary  string // what was looked up: a name on PATH or a path
	Install string // how to get it, for the user
	Err     error  // the lookup error, if any
	// Reason says what is wrong when ralph can tell more than "not found"
	// (e.g. "exists but is not executable"); Fix then says what to do
	// instead of Install.
	Reason string
	Fix    string
}

// Problem is what is wrong, without how to fix it.
func (e *MissingBinaryError) Problem() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s backend: %q %s", e.Backend, e.Binary, e.Reason)
	}
	return fmt.Sprintf("%s backend: executable %q not found", e.Backend, e.Binary)
}

// Hint is how to fix it.
func (e *MissingBinaryError) Hint() string {
	if e.Fix != "" {
		return e.Fix
	}
	return e.Install
}

// Error says both, for places that show no separate hint (ralph doctor, a
// failed iteration).
func (e *MissingBinaryError) Error() string {
	if h := e.Hint(); h != "" {
		return e.Problem() + "; " + h
	}
	return e.Problem()
}

func (e *MissingBinaryError) Unwrap() error { return e.Err }

// UnknownBackendError says a backend name is not one ralph knows.
type UnknownBackendError struct {
	Name       string
	Known      []string // every accepted name, sorted
	Suggestion string   // the closest known name, empty if none is close
}

func (e *UnknownBackendError) Error() string {
	var b strings.Builder
	if e.Name == "" {
		b.WriteString("no backend named")
	} else {
		fmt.Fprintf(&b, "unknown backend %q", e.Name)
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", e.Suggestion)
	}
	fmt.Fprintf(&b, "; known backends: %s", strings.Join(e.Known, ", "))
	return b.String()
}

// SetupError is a backend that cannot be made or run as configured, with
// what is wrong and how to fix it kept apart, so the command line can show
// them on lines of their own.
type SetupError struct {
	Err     error
	Problem string // what is wrong; Err's message when empty
	Fix     string
}

func (e *SetupError) Error() string {
	if e.Problem != "" {
		return e.Problem
	}
	return e.Err.Error()
}

func (e *SetupError) Hint() string  { return e.Fix }
func (e *SetupError) Unwrap() error { return e.Err }

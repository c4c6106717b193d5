// Package hint is ralph's one error-with-hint: an error, how the user can
// fix it and the exit status it ends a command with (Error), the lookup of
// the fix an error carries (Of), the exit status of any error (ExitCode), the kinds of failure that HTTP statuses
// read (Kind), and the one printer of "ralph: error:" and "ralph: hint:"
// lines that the command line and the MCP tools share (Write). Modelled on
// age's errorWithHint (cmd/age/tui.go) and restic's Fatal errors
// (internal/errors/fatal.go).
package hint

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-loop/ralph/internal/exitcode"
)

// Hinter is an error that knows how the user can fix it.
type Hinter interface{ Hint() string }

// Error is an error, how to fix it and the exit status a command that
// fails with it ends with.
type Error struct {
	Err error
	Fix string
	// Code is the exit status; 0 means exitcode.Fatal, since no error
	// ends a command with success.
	Code int
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
func (e *Error) Hint() string  { return e.Fix }

// ExitCode is the status a command that fails with e ends with.
func (e *Error) ExitCode() int {
	if e.Code == exitcode.OK {
		return exitcode.Fatal
	}
	return e.Code
}

// ExitCode is the status a command that fails with err ends with: the one
// an error of its chain carries (ExitCode(): a run's ending, a hint.Error's
// Code, an unknown price), else exitcode.Fatal. Every Kind ends with
// Fatal: the exit table has one status for "ralph could not do what was
// asked", and the kinds tell apart only what front-ends that speak HTTP
// answer differently.
func ExitCode(err error) int {
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return exitcode.Fatal
}

// Of is the fix err carries: the hint of the first error in its chain
// that has one, "" when that error has nothing to say or none has one.
func Of(err error) string {
	var h Hinter
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// Write prints err as "ralph: error: …" lines and hint, if any, as
// "ralph: hint: …" lines: one line of either for each line of its text.
func Write(w io.Writer, err error, hint string) {
	for _, line := range strings.Split(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintf(w, "ralph: error: %s\n", line)
	}
	if hint == "" {
		return
	}
	for _, line := range strings.Split(hint, "\n") {
		fmt.Fprintf(w, "ralph: hint: %s\n", line)
	}
}

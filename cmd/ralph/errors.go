package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/view"
)

// hinter is an error that knows how the user can fix it.
type hinter interface{ Hint() string }

// exitCoder is an error that carries its own exit status.
type exitCoder interface{ ExitCode() int }

// exitError ends a command with a status and no message of its own, for
// commands that have already said what happened.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
func (e exitError) ExitCode() int { return e.code }

// hintError attaches a hint and an exit status to an error.
type hintError struct {
	err  error
	hint string
	code int
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }
func (e *hintError) Hint() string  { return e.hint }
func (e *hintError) ExitCode() int { return e.code }

func withHint(err error, hint string) error {
	return &hintError{err: err, hint: hint, code: exitcode.Fatal}
}

// hintFor is how the user can fix err: the hint attached to it on its way
// here, else the one for the engine error it wraps.
func hintFor(err error) string {
	var h hinter
	if errors.As(err, &h) && h.Hint() != "" {
		return h.Hint()
	}
	return view.EngineHint(err)
}

// reportError prints err as "ralph: error: …" with its hints and returns the
// exit status it carries (3 by default).
func reportError(w io.Writer, err error) int {
	if err == nil {
		return exitcode.OK
	}
	var quiet exitError
	if errors.As(err, &quiet) {
		return quiet.code
	}
	if errors.Is(err, context.Canceled) {
		// Only an interrupt cancels ralph's context: one that came before
		// the command got going is an interrupt too, not a failure.
		fmt.Fprintln(w, "ralph: interrupted")
		return exitcode.Interrupted
	}
	for _, line := range strings.Split(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintf(w, "ralph: error: %s\n", line)
	}
	if hint := hintFor(err); hint != "" {
		for _, line := range strings.Split(hint, "\n") {
			fmt.Fprintf(w, "ralph: hint: %s\n", line)
		}
	}
	var c exitCoder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return exitcode.Fatal
}

// usageError reports a command-line mistake with the usage line and exits 3.
func usageError(w io.Writer, parser *kong.Kong, kctx *kong.Context, err error) int {
	fmt.Fprintf(w, "ralph: error: %s\n", err)
	var perr *kong.ParseError
	if errors.As(err, &perr) && perr.Context != nil {
		kctx = perr.Context
	}
	if kctx == nil {
		fmt.Fprintln(w, "ralph: hint: run `ralph --help` for usage and examples")
		return exitcode.Fatal
	}
	// Usage goes to stderr with the error: stdout may be a JSON stream.
	parser.Stdout = w
	_ = kctx.PrintUsage(true)
	if kctx.Selected() == nil {
		fmt.Fprintln(w, "ralph: hint: run `ralph --help` or `ralph <command> --help` for usage and examples")
	} else {
		fmt.Fprintf(w, "ralph: hint: run `%s --help` for usage and examples\n", commandPath(kctx))
	}
	return exitcode.Fatal
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/view"
)

// exitError ends a command with a status and no message of its own, for
// commands that have already said what happened.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
func (e exitError) ExitCode() int { return e.code }

// withHint attaches how to fix err to it; the command ends with status 3.
func withHint(err error, fix string) error {
	return &hint.Error{Err: err, Fix: fix}
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
	hint.Write(w, err, view.HintOf(err))
	return hint.ExitCode(err)
}

// usageError reports a command-line mistake with the usage line and exits 3.
func usageError(w io.Writer, parser *kong.Kong, kctx *kong.Context, err error) int {
	hint.Write(w, err, "")
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

package config

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/exitcode"
)

// ErrNotFound is wrapped by the error Find returns when a directory has no
// config file, so that a caller (ralph init) can tell it from a bad one.
var ErrNotFound = errors.New("no ralph.yml")

// Problem is one thing wrong with a config: what, where and how to fix it.
type Problem struct {
	File string // empty when the problem is not in a file (a flag, say)
	Line int    // 1-based; 0 when the problem is about the file as a whole
	Msg  string
	Hint string
}

// Where is "file:line", "file" or "", whichever is known.
func (p Problem) Where() string {
	switch {
	case p.File == "":
		return ""
	case p.Line <= 0:
		return p.File
	default:
		return p.File + ":" + strconv.Itoa(p.Line)
	}
}

// String renders the problem on one line: where, what, and the hint.
func (p Problem) String() string {
	var b strings.Builder
	if w := p.Where(); w != "" {
		b.WriteString(w)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	if p.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(p.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Error is every problem found in a config. Loading does not stop at the
// first one, so that `ralph validate` can show them all at once.
//
// Error() renders one problem per line. A lone problem renders without its
// hint, which Hint() returns instead, so that the CLI can print it as
// "ralph: error: …" and "ralph: hint: …" lines (and a hint may span lines,
// like Find's example config). With several problems each line carries its
// own hint, since one Hint() could not say which problem it fixes.
type Error struct {
	Problems []Problem
	// cause is an underlying error worth testing with errors.Is, such as
	// ErrNotFound or fs.ErrNotExist; nil for problems of content.
	cause error
}

// Error renders one problem per line.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		p := e.Problems[0]
		p.Hint = ""
		return p.String()
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Hint is how to fix a lone problem; "" when there are several, whose hints
// are in Error().
func (e *Error) Hint() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Hint
	}
	return ""
}

// Unwrap exposes the cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// ExitCode is exitcode.Fatal, "fatal: bad config or flags" in the table of
// docs/architecture.md#exit-codes, for kong's ExitCoder.
func (e *Error) ExitCode() int { return exitcode.Fatal }

// problemError wraps a single problem.
func problemError(p Problem, cause error) *Error {
	return &Error{Problems: []Problem{p}, cause: cause}
}

// pathReason is why a file operation failed, without the path, which the
// problem already names.
func pathReason(err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

package hint

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/internal/exitcode"
)

func TestWritePrintsEveryLineOfErrorAndHint(t *testing.T) {
	var b strings.Builder
	Write(&b, errors.New("first\nsecond\n"), "do this\nthen that")
	assert.Equal(t, "ralph: error: first\nralph: error: second\nralph: hint: do this\nralph: hint: then that\n", b.String())

	b.Reset()
	Write(&b, errors.New("alone"), "")
	assert.Equal(t, "ralph: error: alone\n", b.String())
}

func TestOfIsTheFirstHintInTheChain(t *testing.T) {
	inner := &Error{Err: errors.New("inner"), Fix: "inner fix"}
	assert.Equal(t, "inner fix", Of(fmt.Errorf("wrapped: %w", inner)))
	// The outermost error that can say how to fix it has the say, even
	// when it says nothing: the caller then falls back to its own advice.
	assert.Equal(t, "", Of(&Error{Err: inner}))
	assert.Equal(t, "", Of(errors.New("plain")))
}

func TestExitCodeDefaultsToFatal(t *testing.T) {
	assert.Equal(t, exitcode.Fatal, (&Error{Err: errors.New("x")}).ExitCode())
	assert.Equal(t, exitcode.Limit, (&Error{Err: errors.New("x"), Code: exitcode.Limit}).ExitCode())
}

type ended struct{ code int }

func (e ended) Error() string { return "ended" }
func (e ended) ExitCode() int { return e.code }

func TestExitCodeIsTheOneTheChainCarriesElseFatal(t *testing.T) {
	assert.Equal(t, exitcode.Limit, ExitCode(fmt.Errorf("run: %w", ended{exitcode.Limit})))
	assert.Equal(t, exitcode.Failure, ExitCode(&Error{Err: errors.New("x"), Code: exitcode.Failure}))
	assert.Equal(t, exitcode.Fatal, ExitCode(New(Conflict, "busy")), "a kind alone ends with 3")
	assert.Equal(t, exitcode.Fatal, ExitCode(errors.New("plain")))
}

type joined []error

func (j joined) Error() string   { return "joined" }
func (j joined) Unwrap() []error { return j }

func TestHasAsksEveryErrorOfTheChain(t *testing.T) {
	missing := New(NotFound, "no such run")
	fixed := &Error{Err: fmt.Errorf("read: %w", missing), Fix: "list the runs"}
	assert.True(t, Has(fixed, Invalid))
	assert.True(t, Has(fixed, NotFound), "the kind of a wrapped error counts too")
	assert.False(t, Has(fixed, Conflict))
	assert.True(t, Has(joined{errors.New("a"), New(Conflict, "b")}, Conflict))
	assert.False(t, Has(errors.New("plain"), Other), "an error without a kind is none of them")
	assert.True(t, errors.Is(fmt.Errorf("x: %w", missing), missing), "a kinded sentinel is still one for errors.Is")
}

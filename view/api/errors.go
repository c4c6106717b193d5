package api

import (
	"errors"

	"github.com/ralph-loop/ralph/view"
)

// Error is a request that cannot be done as asked, and how to fix it.
type Error struct {
	Err error
	Fix string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
func (e *Error) Hint() string  { return e.Fix }

// HintOf is how to fix err: the fix it carries, else the advice on the
// engine's error it wraps, else "".
func HintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		return h.Hint()
	}
	return view.EngineHint(err)
}

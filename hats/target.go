package hats

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/suggest"
)

// UnknownHatError means an ID (an event's target, a command's argument)
// names no hat of the run. IDs are exact: "Builder" is not "builder".
type UnknownHatError struct {
	ID         string
	Known      []string // the coordinator, then the configured hats in config order
	Suggestion string   // the known ID nearest to ID, or "" when none is near
}

func (e *UnknownHatError) Error() string {
	msg := fmt.Sprintf("no hat %q", e.ID)
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg
}

// Hint lists the hats there are.
func (e *UnknownHatError) Hint() string {
	return "the hats are: " + strings.Join(e.Known, ", ")
}

// CheckHatID returns nil when id is the coordinator's ID or one of
// configured (hat IDs in config order), which is every hat a run can
// deliver to; otherwise an *UnknownHatError. It serves those that know a
// run's hats only by ID, such as `ralph emit` reading them from the log.
func CheckHatID(id string, configured []string) error {
	known := append([]string{CoordinatorID}, configured...)
	if slices.Contains(known, id) {
		return nil
	}
	return &UnknownHatError{ID: id, Known: known, Suggestion: suggest.Closest(id, known)}
}

// CheckHatID is [CheckHatID] for the registry's hats.
func (r *Registry) CheckHatID(id string) error {
	ids := make([]string, len(r.hats))
	for i, h := range r.hats {
		ids[i] = h.ID
	}
	return CheckHatID(id, ids)
}

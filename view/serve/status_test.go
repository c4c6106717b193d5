package serve

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
)

// The engine's and the autopilot's errors say what kind of failure they
// are; the status is read from that, wrapped or not.
func TestStatusOfTheEnginesAndTheAutopilotsErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&runfiles.LockHeldError{Path: ".ralph/loop.lock"}, http.StatusConflict},
		{&engine.UnfinishedRunError{RunID: "r1"}, http.StatusConflict},
		{&autopilot.RunningError{Repo: "/repo"}, http.StatusConflict},
		{&autopilot.LoopRunningError{Repo: "/repo"}, http.StatusConflict},
		{&engine.NoRunError{Why: "no checkpoint"}, http.StatusNotFound},
		{&runfiles.UnknownRunError{ID: "x"}, http.StatusNotFound},
		{&runfiles.AmbiguousRunError{ID: "r", Matches: []string{"r1", "r2"}}, http.StatusBadRequest},
		{&runfiles.CorruptStateError{Path: "state.json", Err: errors.New("eof")}, http.StatusBadRequest},
		{&autopilot.PreconditionError{Problem: "no commit"}, http.StatusBadRequest},
		{&engine.StorageError{Op: "write", Path: "state.json", Err: errors.New("disk full")}, http.StatusInternalServerError},
		{&engine.AgentAuthError{Backend: "claude"}, http.StatusInternalServerError},
	} {
		assert.Equal(t, c.want, statusOf(c.err), "%T", c.err)
		assert.Equal(t, c.want, statusOf(fmt.Errorf("serve: %w", c.err)), "wrapped %T", c.err)
	}
}

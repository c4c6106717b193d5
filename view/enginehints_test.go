package view

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/runfiles"
)

// The engine's refusals of a request carry facts; the command to type is
// said here, as HintOf finds it through any wrapping.
func TestHintOfRefusedRequests(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&runfiles.NotRunningError{Dir: "/w", What: "loop"}, "`ralph status` shows how the last run ended"},
		{&runfiles.NotRunningError{Dir: "/w", What: "autopilot"}, "`ralph autopilot status` shows how the last one ended"},
		{&runfiles.NotPendingError{ID: "q-1", Pending: &runfiles.Question{ID: "q-2", Text: "Which?"}},
			"answer the pending question with `ralph answer q-2 \"TEXT\"` (it asks: Which?)"},
		{&runfiles.NotPendingError{}, "a question waits once the iteration that asked it has ended; `ralph status` shows waiting_for_human"},
		{&runfiles.QuestionError{What: "answer", Problem: "the answer is empty"}, `say what the agent should do, e.g. ralph answer "keep the old API"`},
		{&runfiles.QuestionError{What: "timeout"}, "give a wait such as 30m, or leave it out"},
		{&runfiles.LockHeldError{Path: "/w/.ralph/loop.lock", Holder: runfiles.LockInfo{PID: 42}},
			"wait for it to finish (ralph loop --wait), or stop it with `ralph stop` or `kill 42`"},
		{&runfiles.LockHeldError{Path: "/w/.ralph/" + runfiles.AutopilotLockFile, Holder: runfiles.LockInfo{PID: 42}},
			"see it with `ralph autopilot status`, stop it with `ralph autopilot stop` (or `ralph autopilot stop --now`)"},
	} {
		assert.Equal(t, tc.want, HintOf(fmt.Errorf("wrapped: %w", tc.err)), "%#v", tc.err)
	}
}

package engine

import (
	"time"

	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// iteration is one hat's turn: made by selecting when it picks the hat,
// filled in by running, and consumed by collecting, which records it in
// the log. Waiting reads the last one's rate limit.
type iteration struct {
	info IterationInfo
	// events are the offsets of the pending events the hat handles.
	events []int64

	// before and specBefore describe the workspace when the agent
	// started, to tell what it changed.
	before     Snapshot
	specBefore []checklist.Item
	// attempt is the how-many-th start of the iteration this is, which
	// names its prompt and raw output files; treeBefore is the tree of
	// the workspace when the agent started, or treeErr why there is none.
	attempt    int
	treeBefore string
	treeErr    error

	// result is what the agent did; interrupted says it was cut off (a
	// signal, `ralph stop --now`, a failed write) rather than finished.
	result      events.AgentResult
	interrupted bool
	// backend is the backend of the hat's chain the agent runs on;
	// switched, when set, moves the iteration to another one (running
	// decides, collecting records it).
	backend  Backend
	switched *runfiles.BackendSwitchedRecord
	// switchWait is when the backend switched to comes back, when it is
	// out too (every backend of the chain is): the run waits until then.
	switchWait time.Time
}

// outcome is how the iteration ended, as iteration.finished records it.
func (it *iteration) outcome() runfiles.Outcome {
	switch {
	case it.interrupted:
		return runfiles.OutcomeInterrupted
	case it.result.Failure == events.FailureRateLimit:
		return runfiles.OutcomeRateLimited
	case it.switched != nil:
		return runfiles.OutcomeSwitched
	case it.result.Failed():
		return runfiles.OutcomeFailure
	}
	return runfiles.OutcomeSuccess
}

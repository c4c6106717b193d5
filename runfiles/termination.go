package runfiles

import "github.com/ralph-loop/ralph/internal/exitcode"

// Reason says why a run ended.
type Reason string

// Termination reasons, in the order they are checked.
const (
	ReasonCompleted           Reason = "completed"
	ReasonCancelled           Reason = "cancelled"
	ReasonInterrupted         Reason = "interrupted"
	ReasonStopped             Reason = "stopped"
	ReasonConsecutiveFailures Reason = "consecutive_failures"
	ReasonLoopThrashing       Reason = "loop_thrashing"
	ReasonValidationFailure   Reason = "validation_failure"
	ReasonStuck               Reason = "stuck"
	ReasonNoAnswer            Reason = "no_answer"
	ReasonMaxIterations       Reason = "max_iterations"
	ReasonMaxRuntime          Reason = "max_runtime"
	ReasonMaxCost             Reason = "max_cost"
	ReasonBudgetExhausted     Reason = "budget_exhausted"
	ReasonFatal               Reason = "fatal"
)

// Reasons are all the reasons a run can end, in the order they are
// checked.
func Reasons() []Reason {
	return []Reason{ReasonCompleted, ReasonCancelled, ReasonInterrupted, ReasonStopped, ReasonConsecutiveFailures,
		ReasonLoopThrashing, ReasonValidationFailure, ReasonStuck, ReasonNoAnswer, ReasonMaxIterations,
		ReasonMaxRuntime, ReasonMaxCost, ReasonBudgetExhausted, ReasonFatal}
}

// ExitCode maps a termination reason to the process exit status.
func (r Reason) ExitCode() int {
	switch r {
	case ReasonCompleted, ReasonCancelled:
		return exitcode.OK
	case ReasonInterrupted:
		return exitcode.Interrupted
	case ReasonMaxIterations, ReasonMaxRuntime, ReasonMaxCost, ReasonBudgetExhausted:
		return exitcode.Limit
	case ReasonFatal:
		return exitcode.Fatal
	case ReasonStopped, ReasonConsecutiveFailures, ReasonLoopThrashing,
		ReasonValidationFailure, ReasonStuck, ReasonNoAnswer:
		return exitcode.Failure
	}
	return exitcode.Failure
}

// Resumable reports whether `ralph loop --resume` may continue a run that
// ended this way. A completed or cancelled run is over; one that hit a limit
// or failed may go on once the user has raised the limit or fixed the cause.
func (r Reason) Resumable() bool {
	return r != ReasonCompleted && r != ReasonCancelled
}

// SaysHowToGoOn reports whether a run that ended this way carries how to
// go on (Termination.GoOn: the limit to raise, and to what), which the
// command line turns into the resume to type: a plain `ralph loop
// --resume` would end such a run again at once.
func (r Reason) SaysHowToGoOn() bool {
	switch r {
	case ReasonStuck, ReasonMaxIterations, ReasonMaxRuntime, ReasonMaxCost, ReasonBudgetExhausted:
		return true
	case ReasonCompleted, ReasonCancelled, ReasonInterrupted, ReasonStopped,
		ReasonConsecutiveFailures, ReasonLoopThrashing, ReasonValidationFailure, ReasonNoAnswer, ReasonFatal:
		return false
	}
	return false
}

// Unfinished reports whether a run that ended this way should block a plain
// `ralph loop` until the user says --resume or --fresh: it was cut off rather
// than judged.
func (r Reason) Unfinished() bool {
	return r == ReasonInterrupted || r == ReasonStopped
}

// Cause says what ended a run that was cut off (stopped, interrupted) or
// lost its directory, where the Reason alone does not tell.
type Cause string

// Causes of a run's end.
const (
	CauseStopRequest Cause = "stop_request" // a stop request, honoured between iterations
	CauseStopNow     Cause = "stop_now"     // a stop request that interrupted the running iteration
	CauseSignal      Cause = "signal"       // a signal (Ctrl-C, SIGTERM)
	CauseLostDir     Cause = "lost_dir"     // .ralph/ was deleted under the run and recreated from memory
	CauseGitArmed    Cause = "git_armed"    // a confined run changed what decides what git runs in the workspace
)

// ModeChainStep is GoOn.Mode for the loop of a chain's step: the chain
// resumes it (`ralph chain resume`), and the chain's budget, which a
// resume may raise, sets its limits.
const ModeChainStep = "chain-step"

// GoOn is how a run that ended on a limit can go on: a resume that raises
// the limit, since a plain one would end the run again at once. The
// command line says which command and flag do that. A run cut off by a
// lost directory or armed git (CauseLostDir, CauseGitArmed) has one too,
// without Raise: its mode says which command resumes it.
type GoOn struct {
	// Mode is the run's mode (ModeLoop, ModeSpec), or ModeChainStep: the
	// command that resumes it and the flag of its limit differ.
	Mode string `json:"mode"`
	// Raise is the value to raise the limit to on the resume, twice the
	// limit; "" when only the config sets the limit.
	Raise string `json:"raise,omitempty"`
}

// LimitName is the setting a limit's reason comes from, as a person sets
// it ("" for a reason that is no limit on what the run spends).
func (r Reason) LimitName() string {
	switch r {
	case ReasonMaxRuntime:
		return "max_runtime_seconds"
	case ReasonMaxCost:
		return "max_cost_usd"
	case ReasonBudgetExhausted:
		return "max_tokens"
	case ReasonCompleted, ReasonCancelled, ReasonInterrupted, ReasonStopped, ReasonConsecutiveFailures,
		ReasonLoopThrashing, ReasonValidationFailure, ReasonStuck, ReasonNoAnswer, ReasonMaxIterations, ReasonFatal:
		return ""
	}
	return ""
}

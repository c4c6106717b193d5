package view

import (
	"fmt"
	"path/filepath"

	"github.com/ralph-loop/ralph/runfiles"
)

// The engine says how a run ended in facts: its reason, what cut it off,
// what to raise the limit that ended it to. What to type next is the
// command line's to say, here in one place, for every view of a run's end
// (the summary, the stream, `ralph status`, `ralph events`).

// The commands a run's end points to.
const (
	loopResume  = "ralph loop --resume"
	chainResume = "ralph chain resume"
	specResume  = "ralph run --resume"
	inspect     = "ralph events"
)

// EndMessage is the message of a run's end followed, when it needs one, by
// what to do next: how to go past the limit that ended the run, or how to
// continue after its directory was lost.
func EndMessage(t runfiles.Termination) string {
	hint := nextStep(t)
	switch {
	case hint == "":
		return t.Message
	case t.Message == "":
		return hint
	}
	return t.Message + "; " + hint
}

// nextStep is the advice EndMessage adds to the message of t.
func nextStep(t runfiles.Termination) string {
	inChain := t.GoOn != nil && t.GoOn.Mode == runfiles.ModeChainStep
	switch t.Cause {
	case runfiles.CauseLostDir:
		return "continue with `" + resumeCmd(inChain) + "`"
	case runfiles.CauseGitArmed:
		return gitArmedStep(resumeCmd(inChain))
	case runfiles.CauseStopRequest, runfiles.CauseStopNow, runfiles.CauseSignal:
	}
	if t.GoOn == nil {
		return ""
	}
	if inChain {
		return chainStepGoOn(t.Reason)
	}
	resume, iterations := loopResume, "--max-iterations"
	if t.GoOn.Mode == runfiles.ModeSpec {
		resume, iterations = specResume, "-n"
	}
	var flag string
	switch t.Reason {
	case runfiles.ReasonMaxCost:
		return raiseInConfig("event_loop.max_cost_usd", resume)
	case runfiles.ReasonBudgetExhausted:
		return raiseInConfig("event_loop.max_tokens", resume)
	case runfiles.ReasonMaxIterations:
		flag = iterations
	case runfiles.ReasonMaxRuntime:
		flag = "--max-runtime"
	case runfiles.ReasonStuck:
		flag = "--stuck-threshold"
	default:
		return ""
	}
	if t.GoOn.Raise == "" {
		return "to go on, raise it on the resume: `" + resume + " " + flag + " N`"
	}
	return fmt.Sprintf("to go on, raise it on the resume: `%s %s %s`", resume, flag, t.GoOn.Raise)
}

// chainStepGoOn is how a chain's step that ended on limit r goes on: its
// limits are what the chain's budget left it, which the chain's resume
// raises; its iterations are its own, which the resume passes on.
func chainStepGoOn(r runfiles.Reason) string {
	var flag string
	switch r {
	case runfiles.ReasonMaxCost:
		flag = "--max-cost-usd USD"
	case runfiles.ReasonBudgetExhausted:
		flag = "--max-tokens N"
	case runfiles.ReasonMaxRuntime:
		flag = "--max-runtime DURATION"
	case runfiles.ReasonMaxIterations:
		flag = "--max-iterations N"
	default:
		return "the chain stops at this step; `" + chainResume + "` says how it ended"
	}
	return "to go on, raise it on the chain's resume: `" + chainResume + " " + flag + "`"
}

// ResumeOf is the command that resumes the run whose event log is
// eventsFile: a chain's step is resumed by its chain.
func ResumeOf(eventsFile string) string {
	_, ok := runfiles.ChainStepOf(runfiles.Dir(filepath.Dir(eventsFile)))
	return resumeCmd(ok)
}

// resumeCmd is the command that resumes a loop: its chain's when it is a
// chain's step, whose loop a plain `ralph loop --resume` does not find.
func resumeCmd(inChain bool) string {
	if inChain {
		return chainResume
	}
	return loopResume
}

// gitArmedStep is what to do once a confined run changed what decides
// what git runs in the workspace (runfiles.CauseGitArmed): git itself
// would run it, so the files are read without it; resume goes on.
func gitArmedStep(resume string) string {
	return "read what changed with a text viewer, not git (git would run what they name), " +
		"undo what you did not put there, then continue with `" + resume + "`"
}

// raiseInConfig says how to go on past a limit that only ralph.yml sets.
func raiseInConfig(key, resume string) string {
	return fmt.Sprintf("to go on, raise %s in the config (0: no limit), then `%s`", key, resume)
}

// ResumeHint is what to do about an unfinished run of mode (runfiles.ModeLoop,
// runfiles.ModeSpec, runfiles.ModeChainStep): go on with it, or set it
// aside and start over (a chain's step only goes on, with its chain).
func ResumeHint(mode string) string {
	resume := loopResume
	switch mode {
	case runfiles.ModeSpec:
		resume = specResume
	case runfiles.ModeChainStep:
		return "resume the chain, and this step's loop with it: `" + chainResume + "`"
	}
	return "continue it with `" + resume + "`, or start over with `ralph loop --fresh` (the old run is archived, not deleted)"
}

// resumeAdvised reports whether a run's summary should suggest a plain
// resume: the run can go on, and its message does not already say how.
func resumeAdvised(r runfiles.Reason) bool {
	return r.Resumable() && !r.SaysHowToGoOn()
}

package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// checking applies the termination rules in the order of the exit-code
// table. Completion comes first, so a run that completed on its last allowed
// iteration succeeds.
func (e *Engine) checking(ctx context.Context) (runfiles.Phase, error) {
	if t := e.termination(ctx); t != nil {
		e.ending = t
		return runfiles.PhaseTerminating, nil
	}
	if e.st.Question != nil {
		return runfiles.PhaseAwaitingHuman, nil
	}
	if err := e.cooldown(ctx); err != nil {
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted during the cooldown")
		return runfiles.PhaseTerminating, nil
	}
	if err := e.awaitRateLimit(ctx); err != nil {
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted while waiting for a rate limit to lift")
		return runfiles.PhaseTerminating, nil
	}
	if e.paced() {
		return runfiles.PhasePacing, nil
	}
	return runfiles.PhaseSelecting, nil
}

// awaitRateLimit waits out a rate limit recorded in the log that has not
// lifted yet: a run resumed in the middle of a wait must not spend an agent
// call on a limit it already knows about.
func (e *Engine) awaitRateLimit(ctx context.Context) error {
	wait := e.st.RateLimitedUntil.Sub(e.now())
	if e.st.RateLimitedUntil.IsZero() || wait <= 0 {
		return nil
	}
	e.opts.Reporter.RateLimited(e.iter.info, wait)
	return sleep(ctx, wait)
}

func (e *Engine) termination(ctx context.Context) *runfiles.Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case st.Completed:
		return e.terminate(runfiles.ReasonCompleted, e.completedBecause())
	case s.SpecFile != "" && e.specDone():
		return e.terminate(runfiles.ReasonCompleted, "every box of "+e.specName()+" is checked")
	case st.Cancelled:
		return e.terminate(runfiles.ReasonCancelled, "the cancellation topic "+s.CancellationTopic+" was published")
	case e.dirLost:
		return e.terminateBy(runfiles.ReasonFatal, runfiles.CauseLostDir, lostDirMessage)
	case e.gitArmed != nil:
		return e.terminateBy(runfiles.ReasonFatal, runfiles.CauseGitArmed, e.gitArmed.Error())
	case ctx.Err() != nil:
		return e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted by a signal")
	case e.stop.Requested():
		return e.terminateBy(runfiles.ReasonStopped, runfiles.CauseStopRequest, "a stop request asked the loop to stop")
	case s.MaxConsecutiveFailures > 0 && st.ConsecutiveFailures >= s.MaxConsecutiveFailures:
		return e.terminate(runfiles.ReasonConsecutiveFailures, fmt.Sprintf("%s in a row; the last: %s",
			plural.Count(st.ConsecutiveFailures, "agent failure", "agent failures"), e.lastFailure()))
	}
	if key, n := st.MaxBlocked(); n >= thrashLimit {
		return e.terminate(runfiles.ReasonLoopThrashing, fmt.Sprintf("the same blocked event came back %d times: %s", n, key))
	}
	if s.StuckThreshold > 0 && st.NoProgress >= s.StuckThreshold {
		return e.goOn(e.terminate(runfiles.ReasonStuck, e.stuckMessage()), strconv.Itoa(2*s.StuckThreshold))
	}
	if st.ConsecutiveMalformed >= malformedLimit {
		return e.terminate(runfiles.ReasonValidationFailure, fmt.Sprintf("%s in a row",
			plural.Count(st.ConsecutiveMalformed, "malformed event line", "malformed event lines")))
	}
	return e.limitReached()
}

// Thresholds fixed by design: three of the same is a pattern, not bad luck.
const (
	thrashLimit    = 3
	malformedLimit = 3
)

func (e *Engine) limitReached() *runfiles.Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case s.MaxIterations > 0 && st.Confirming == nil && st.CountedIterations() >= s.MaxIterations:
		// A claim waiting for its confirmation gets it even at the limit;
		// if the confirmation fails, the next check ends the run here.
		return e.goOn(e.terminate(runfiles.ReasonMaxIterations, fmt.Sprintf("reached max_iterations (%d)", s.MaxIterations)),
			strconv.Itoa(2*s.MaxIterations))
	}
	return e.budgetReached()
}

// budgetReached is the limit on what the run may spend (its runtime, cost
// and tokens) that it has reached, if any: those a running wave is
// stopped by, since each of its workers adds to them (wave.go).
func (e *Engine) budgetReached() *runfiles.Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case s.MaxRuntime > 0 && st.Runtime(e.now()) >= s.MaxRuntime:
		return e.goOn(e.terminate(runfiles.ReasonMaxRuntime, fmt.Sprintf("reached max_runtime_seconds (%s)", s.MaxRuntime)),
			shortDuration(2*s.MaxRuntime))
	case s.MaxCostUSD > 0 && st.CostUSD >= s.MaxCostUSD:
		return e.goOn(e.terminate(runfiles.ReasonMaxCost, fmt.Sprintf("spent $%.4f of max_cost_usd $%.2f", st.CostUSD, s.MaxCostUSD)), "")
	case s.MaxTokens > 0 && st.Usage.Total() >= s.MaxTokens:
		return e.goOn(e.terminate(runfiles.ReasonBudgetExhausted, fmt.Sprintf("used %d of max_tokens %d", st.Usage.Total(), s.MaxTokens)), "")
	}
	return nil
}

func (e *Engine) stuckMessage() string {
	s, st := e.opts.Settings, e.st
	if s.SpecFile != "" {
		return fmt.Sprintf("%s in a row checked no new box of %s",
			plural.Count(st.NoProgress, "iteration", "iterations"), e.specName())
	}
	return fmt.Sprintf("%s in a row made no progress (no accepted event, no file changed, no commit); hats tried: %s",
		plural.Count(st.NoProgress, "iteration", "iterations"), plural.Tally(st.Tried))
}

// A run that ends on a limit can go on, but a plain resume would end again
// at once for the same reason: its termination carries what to raise the
// limit to, twice the limit, a round step the user can adjust. Which
// command and flag do that is the command line's to say.

// goOn records on t how to go past the limit that ended the run: raise,
// the new value of a limit a flag sets, or "" for one only the config
// sets.
func (e *Engine) goOn(t *runfiles.Termination, raise string) *runfiles.Termination {
	t.GoOn = &runfiles.GoOn{Mode: e.mode(), Raise: raise}
	return t
}

// mode is the run's mode as the command that resumes it depends on it.
func (e *Engine) mode() string {
	switch {
	case e.opts.StateDir != "":
		// Only a chain's step keeps its files elsewhere: its chain goes on.
		return runfiles.ModeChainStep
	case e.opts.Settings.SpecFile != "":
		return runfiles.ModeSpec
	}
	return runfiles.ModeLoop
}

// shortDuration renders d as a flag value a person would type: 8h, 1h30m,
// 90s, without the zero units time.Duration.String adds.
func shortDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Second {
		return "1s"
	}
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}

func (e *Engine) terminate(r runfiles.Reason, msg string) *runfiles.Termination {
	return &runfiles.Termination{Reason: r, ExitCode: r.ExitCode(), Message: msg, At: e.now()}
}

// terminateBy is terminate for a run that cause cut off.
func (e *Engine) terminateBy(r runfiles.Reason, cause runfiles.Cause, msg string) *runfiles.Termination {
	t := e.terminate(r, msg)
	t.Cause = cause
	if cause == runfiles.CauseLostDir || cause == runfiles.CauseGitArmed {
		// Its advice ends in a resume, which a chain's step gets from its
		// chain: no limit to raise, only the mode.
		t.GoOn = &runfiles.GoOn{Mode: e.mode()}
	}
	return t
}

func (e *Engine) lastFailure() string {
	if e.st.LastFinished != nil && e.st.LastFinished.Message != "" {
		return e.st.LastFinished.Message
	}
	return "no message"
}

// cooldown waits cooldown_delay_seconds between iterations run by this
// process.
func (e *Engine) cooldown(ctx context.Context) error {
	if e.opts.Settings.Cooldown <= 0 || e.iter.info.N == 0 {
		return nil
	}
	return sleep(ctx, e.opts.Settings.Cooldown)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// completedBecause says what completed the run: ralph's own check, or an
// agent's claim.
func (e *Engine) completedBecause() string {
	why := "the completion topic " + e.opts.Settings.CompletionTopic + " was accepted"
	switch e.st.CompletedBy {
	case runfiles.VerifiedBySpec:
		why = "every box of " + e.specName() + " is checked"
	case runfiles.VerifiedByCriteria:
		why = "the acceptance criteria passed"
	}
	if failing := e.st.StillFailing; len(failing) > 0 {
		why += "; still failing, as before the run (baseline: ignore): " + strings.Join(failing, ", ")
	}
	return why
}

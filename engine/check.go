package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/plural"
)

// checking applies the termination rules in the order of the exit-code
// table. Completion comes first, so a run that completed on its last allowed
// iteration succeeds.
func (e *Engine) checking(ctx context.Context) (Phase, error) {
	if t := e.termination(ctx); t != nil {
		e.ending = t
		return PhaseTerminating, nil
	}
	if err := e.cooldown(ctx); err != nil {
		e.ending = e.terminate(ReasonInterrupted, "interrupted during the cooldown")
		return PhaseTerminating, nil
	}
	if err := e.awaitRateLimit(ctx); err != nil {
		e.ending = e.terminate(ReasonInterrupted, "interrupted while waiting for a rate limit to lift")
		return PhaseTerminating, nil
	}
	return PhaseSelecting, nil
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

func (e *Engine) termination(ctx context.Context) *Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case st.Completed:
		return e.terminate(ReasonCompleted, e.completedBecause())
	case s.SpecFile != "" && e.specDone():
		return e.terminate(ReasonCompleted, "every box of "+e.specName()+" is checked")
	case st.Cancelled:
		return e.terminate(ReasonCancelled, "the cancellation topic "+s.CancellationTopic+" was published")
	case e.dirLost:
		return e.terminate(ReasonFatal, lostDirMessage)
	case ctx.Err() != nil:
		return e.terminate(ReasonInterrupted, "interrupted by a signal")
	case e.stop.Requested():
		return e.terminate(ReasonStopped, "`ralph stop` asked the loop to stop")
	case s.MaxConsecutiveFailures > 0 && st.ConsecutiveFailures >= s.MaxConsecutiveFailures:
		return e.terminate(ReasonConsecutiveFailures, fmt.Sprintf("%s in a row; the last: %s",
			plural.Count(st.ConsecutiveFailures, "agent failure", "agent failures"), e.lastFailure()))
	}
	if key, n := st.MaxBlocked(); n >= thrashLimit {
		return e.terminate(ReasonLoopThrashing, fmt.Sprintf("the same blocked event came back %d times: %s", n, key))
	}
	if s.StuckThreshold > 0 && st.NoProgress >= s.StuckThreshold {
		return e.terminate(ReasonStuck, e.stuckMessage()+"; "+e.raiseOnResume("--stuck-threshold", strconv.Itoa(2*s.StuckThreshold)))
	}
	if st.ConsecutiveMalformed >= malformedLimit {
		return e.terminate(ReasonValidationFailure, fmt.Sprintf("%s in a row",
			plural.Count(st.ConsecutiveMalformed, "malformed event line", "malformed event lines")))
	}
	return e.limitReached()
}

// Thresholds fixed by design: three of the same is a pattern, not bad luck.
const (
	thrashLimit    = 3
	malformedLimit = 3
)

func (e *Engine) limitReached() *Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case s.MaxIterations > 0 && st.Confirming == nil && st.CountedIterations() >= s.MaxIterations:
		// A claim waiting for its confirmation gets it even at the limit;
		// if the confirmation fails, the next check ends the run here.
		return e.terminate(ReasonMaxIterations, fmt.Sprintf("reached max_iterations (%d); %s",
			s.MaxIterations, e.raiseOnResume(e.iterationsFlag(), strconv.Itoa(2*s.MaxIterations))))
	case s.MaxRuntime > 0 && st.Runtime(e.now()) >= s.MaxRuntime:
		return e.terminate(ReasonMaxRuntime, fmt.Sprintf("reached max_runtime_seconds (%s); %s",
			s.MaxRuntime, e.raiseOnResume("--max-runtime", shortDuration(2*s.MaxRuntime))))
	case s.MaxCostUSD > 0 && st.CostUSD >= s.MaxCostUSD:
		return e.terminate(ReasonMaxCost, fmt.Sprintf("spent $%.4f of max_cost_usd $%.2f; %s",
			st.CostUSD, s.MaxCostUSD, e.raiseInConfig("event_loop.max_cost_usd")))
	case s.MaxTokens > 0 && st.Usage.Total() >= s.MaxTokens:
		return e.terminate(ReasonBudgetExhausted, fmt.Sprintf("used %d of max_tokens %d; %s",
			st.Usage.Total(), s.MaxTokens, e.raiseInConfig("event_loop.max_tokens")))
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
// at once for the same reason: its message says what to raise. The number
// suggested is twice the limit, a round step the user can adjust.

// raiseOnResume says which flag of the resume raises a limit, as the
// command to type. In SPEC mode the command is `ralph run`, as there.
func (e *Engine) raiseOnResume(flag, value string) string {
	return fmt.Sprintf("to go on, raise it on the resume: `%s %s %s`", e.resumeCommand(), flag, value)
}

// raiseInConfig says how to go on past a limit that only ralph.yml sets.
func (e *Engine) raiseInConfig(key string) string {
	return fmt.Sprintf("to go on, raise %s in the config (0: no limit), then `%s`", key, e.resumeCommand())
}

func (e *Engine) resumeCommand() string {
	if e.opts.Settings.SpecFile != "" {
		return "ralph run --resume"
	}
	return "ralph loop --resume"
}

// iterationsFlag is the flag that sets the iteration limit: SPEC mode's -n,
// else --max-iterations.
func (e *Engine) iterationsFlag() string {
	if e.opts.Settings.SpecFile != "" {
		return "-n"
	}
	return "--max-iterations"
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

func (e *Engine) terminate(r Reason, msg string) *Termination {
	return &Termination{Reason: r, ExitCode: r.ExitCode(), Message: msg, At: e.now()}
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
	case VerifiedBySpec:
		why = "every box of " + e.specName() + " is checked"
	case VerifiedByCriteria:
		why = "the acceptance criteria passed"
	}
	if failing := e.st.StillFailing; len(failing) > 0 {
		why += "; still failing, as before the run (baseline: ignore): " + strings.Join(failing, ", ")
	}
	return why
}

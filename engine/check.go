package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/internal/plural"
)

// checking applies the termination rules in the order of the exit-code
// table. Completion comes first, so a run that completed on its last allowed
// iteration succeeds.
func (e *Engine) checking(ctx context.Context) (State, error) {
	if t := e.termination(ctx); t != nil {
		e.ending = t
		return StateTerminating, nil
	}
	if err := e.cooldown(ctx); err != nil {
		e.ending = e.terminate(ReasonInterrupted, "interrupted during the cooldown")
		return StateTerminating, nil
	}
	if err := e.awaitRateLimit(ctx); err != nil {
		e.ending = e.terminate(ReasonInterrupted, "interrupted while waiting for a rate limit to lift")
		return StateTerminating, nil
	}
	return StateSelecting, nil
}

// awaitRateLimit waits out a rate limit recorded in the log that has not
// lifted yet: a run resumed in the middle of a wait must not spend an agent
// call on a limit it already knows about.
func (e *Engine) awaitRateLimit(ctx context.Context) error {
	wait := e.st.RateLimitedUntil.Sub(e.now())
	if e.st.RateLimitedUntil.IsZero() || wait <= 0 {
		return nil
	}
	e.opts.Reporter.RateLimited(e.iter, wait)
	return sleep(ctx, wait)
}

func (e *Engine) termination(ctx context.Context) *Termination {
	s, st := e.opts.Settings, e.st
	switch {
	case st.Completed:
		return e.terminate(ReasonCompleted, "the completion topic "+s.CompletionTopic+" was accepted")
	case s.SpecFile != "" && e.specDone():
		return e.terminate(ReasonCompleted, "every box of "+s.SpecFile+" is checked")
	case st.Cancelled:
		return e.terminate(ReasonCancelled, "the cancellation topic "+s.CancellationTopic+" was published")
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
	if s.StuckThreshold > 0 && st.NoProgress >= s.StuckThreshold && s.SpecFile != "" {
		return e.terminate(ReasonStuck, fmt.Sprintf("%s in a row checked no new box of %s",
			plural.Count(st.NoProgress, "iteration", "iterations"), s.SpecFile))
	}
	if s.StuckThreshold > 0 && st.NoProgress >= s.StuckThreshold {
		return e.terminate(ReasonStuck, fmt.Sprintf("%s in a row made no progress (no accepted event, no file changed, no commit); hats tried: %s",
			plural.Count(st.NoProgress, "iteration", "iterations"), plural.Tally(st.Tried)))
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
	case s.MaxIterations > 0 && st.Iteration >= s.MaxIterations:
		return e.terminate(ReasonMaxIterations, fmt.Sprintf("reached max_iterations (%d)", s.MaxIterations))
	case s.MaxRuntime > 0 && st.Runtime(e.now()) >= s.MaxRuntime:
		return e.terminate(ReasonMaxRuntime, fmt.Sprintf("reached max_runtime_seconds (%s)", s.MaxRuntime))
	case s.MaxCostUSD > 0 && st.CostUSD >= s.MaxCostUSD:
		return e.terminate(ReasonMaxCost, fmt.Sprintf("spent $%.4f of max_cost_usd $%.2f", st.CostUSD, s.MaxCostUSD))
	case s.MaxTokens > 0 && st.Usage.Total() >= s.MaxTokens:
		return e.terminate(ReasonBudgetExhausted, fmt.Sprintf("used %d of max_tokens %d", st.Usage.Total(), s.MaxTokens))
	}
	return nil
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
	if e.opts.Settings.Cooldown <= 0 || e.iter.N == 0 {
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

package engine

import (
	"context"
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// rateLimitBackoff is the first wait when the provider gives no reset time;
// it doubles with each limit in a row.
const rateLimitBackoff = 30 * time.Second

func (e *Engine) rateLimitWait() time.Duration {
	maxWait := e.opts.Settings.RateLimitMaxWait
	if maxWait <= 0 {
		maxWait = time.Hour
	}
	var wait time.Duration
	if reset := e.iter.result.RateLimitResetAt; !reset.IsZero() {
		wait = reset.Sub(e.now()) + time.Second
	} else {
		wait = rateLimitBackoff << min(e.rateWaits, 10)
	}
	return max(min(e.chainWait(wait), maxWait), time.Second)
}

func (e *Engine) rateLimitRecord() runfiles.RateLimitedRecord {
	r := runfiles.RateLimitedRecord{Iteration: e.iter.info.N, Hat: e.iter.info.Hat.ID, Backend: e.iter.info.Backend,
		Message: e.iter.result.FailureMessage, WaitMS: e.rateLimitWait().Milliseconds()}
	if !e.iter.result.RateLimitResetAt.IsZero() {
		r.ResetAt = e.iter.result.RateLimitResetAt.UTC().Format(time.RFC3339)
	}
	return r
}

// waiting sleeps until the rate limit lifts, then repeats the iteration.
// It waits until the moment the log records (agent.rate_limited's time
// plus its wait_ms, as RunState folds it), not for a wait worked out again
// now: the checks between the two would shorten the wait the log
// announces, and a resumed run waits for that same moment.
func (e *Engine) waiting(ctx context.Context) (runfiles.Phase, error) {
	wait := max(e.st.RateLimitedUntil.Sub(e.now()), 0)
	e.rateWaits++
	e.opts.Reporter.RateLimited(e.iter.info, wait)
	if err := sleep(ctx, wait); err != nil {
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted while waiting for a rate limit to lift")
		return runfiles.PhaseTerminating, nil
	}
	// The wait is over even if the clock says a moment is left.
	e.st.RateLimitedUntil = time.Time{}
	return runfiles.PhaseChecking, nil
}

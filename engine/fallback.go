package engine

import (
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// Fallback is the rest of a backend chain (cli.fallback): the backends
// tried, in order, when the one before them hits a far rate limit or
// fails for the provider's sake.
type Fallback struct {
	Backends []Backend
	// After is how far away a rate limit's reset must be for the iteration
	// to move to the next backend; a nearer one is waited for.
	After time.Duration
}

// DefaultFallbackAfter is fallback_after_seconds' default.
const DefaultFallbackAfter = 10 * time.Minute

// SwitchReporter is a Reporter that wants to hear that a hat's iterations
// moved to another backend of its chain.
type SwitchReporter interface {
	BackendSwitched(it IterationInfo, r runfiles.BackendSwitchedRecord)
}

// chain is a hat's backends in the order ralph tries them, and when a rate
// limit moves the iteration on: the hat's own backend and fallback, else
// the default's.
func (e *Engine) chain(hatID string) ([]Backend, time.Duration) {
	primary := e.opts.Backend
	if b, ok := e.opts.PerHat[hatID]; ok && b != nil {
		primary = b
	}
	fb := e.opts.Fallback[e.chainKey(hatID)]
	after := fb.After
	if after <= 0 {
		after = DefaultFallbackAfter
	}
	return append([]Backend{primary}, fb.Backends...), after
}

// chainKey names hat's chain: the hat's own when it has a backend of its
// own, else cli's ("").
func (e *Engine) chainKey(hatID string) string {
	if b, ok := e.opts.PerHat[hatID]; ok && b != nil {
		return hatID
	}
	return ""
}

// pick is the backend a hat's next iteration runs on: the first of its
// chain that is available now; when none is, the one whose reset comes
// first (the run waits for it: agent.rate_limited recorded the wait).
func (e *Engine) pick(hatID string) Backend {
	chain, _ := e.chain(hatID)
	var soonest Backend
	var at time.Time
	for _, b := range chain {
		u, limited := e.st.Unavailable[b.Name()]
		if !limited || u.AvailableAt(e.now()) {
			return b
		}
		if !u.Until.IsZero() && (soonest == nil || u.Until.Before(at)) {
			soonest, at = b, u.Until
		}
	}
	if soonest != nil {
		return soonest
	}
	return chain[0]
}

// nextAfter is the first backend of hat's chain, other than cur, that is
// available now; nil when there is none.
func (e *Engine) nextAfter(hatID, cur string) Backend {
	chain, _ := e.chain(hatID)
	for _, b := range chain {
		if b.Name() == cur {
			continue
		}
		if u, limited := e.st.Unavailable[b.Name()]; !limited || u.AvailableAt(e.now()) {
			return b
		}
	}
	return nil
}

// switchFor decides whether the iteration that just ran moves to another
// backend of its chain: a rate limit whose reset is further away than the
// chain's After (one that names no reset is waited for with backoff, as
// without a chain: nothing says it is far), or a provider failure (runErr
// is Run's error when the agent could not run at all). Nil when it does
// not: no chain, no backend of it available, or the provider did nothing
// wrong.
func (e *Engine) switchFor(res events.AgentResult, runErr error) *runfiles.BackendSwitchedRecord {
	info := e.iter.info
	r := e.switchReason(info.Hat.ID, info.N, info.Backend, res, runErr)
	if r == nil {
		return nil
	}
	next := e.nextAfter(info.Hat.ID, info.Backend)
	if next == nil && r.Reason != runfiles.SwitchRateLimit {
		// Every other backend of the chain is limited: the provider's
		// failure waits for the first of them to come back, as a limit
		// with no backend to go on with waits for the earliest reset.
		next, e.iter.switchWait = e.soonestBack(info.Hat.ID, info.Backend)
	}
	if next == nil {
		return nil
	}
	r.To = next.Name()
	return r
}

// switchReason is the backend.switched line, To left empty, for an agent
// of hat's iteration n that ran on from and ended with res (runErr: it
// could not run): nil when the provider gave no reason to leave from.
func (e *Engine) switchReason(hatID string, n int, from string, res events.AgentResult, runErr error) *runfiles.BackendSwitchedRecord {
	_, after := e.chain(hatID)
	r := &runfiles.BackendSwitchedRecord{Iteration: n, Hat: hatID, Chain: e.chainKey(hatID), From: from, Message: res.FailureMessage}
	switch {
	case runErr != nil:
		r.Reason, r.Message = runfiles.SwitchUnavailable, runErr.Error()
	case res.Failure == events.FailureAuth:
		r.Reason = runfiles.SwitchAuth
	case res.Failure == events.FailureProvider:
		r.Reason, r.ResetAt = runfiles.SwitchOverloaded, e.now().Add(after).UTC().Format(time.RFC3339)
	case res.Failure == events.FailureRateLimit:
		reset := res.RateLimitResetAt
		if reset.IsZero() || reset.Sub(e.now()) <= after {
			return nil
		}
		r.Reason, r.ResetAt = runfiles.SwitchRateLimit, reset.UTC().Format(time.RFC3339)
	default:
		return nil
	}
	return r
}

// soonestBack is the backend of hat's chain, other than cur, whose reset
// comes first, and when; nil when none of them has a reset (they are out
// until the run is resumed).
func (e *Engine) soonestBack(hatID, cur string) (Backend, time.Time) {
	chain, _ := e.chain(hatID)
	var soonest Backend
	var at time.Time
	for _, b := range chain {
		u, ok := e.st.Unavailable[b.Name()]
		if b.Name() == cur || !ok || u.Until.IsZero() {
			continue
		}
		if soonest == nil || u.Until.Before(at) {
			soonest, at = b, u.Until
		}
	}
	return soonest, at
}

// switchWaitRecord is the agent.rate_limited line of an iteration whose
// chain has no backend available now: the run waits until the one it
// switched to comes back.
func (e *Engine) switchWaitRecord() runfiles.RateLimitedRecord {
	it := e.iter
	wait := max(it.switchWait.Sub(e.now())+time.Second, time.Second)
	return runfiles.RateLimitedRecord{Iteration: it.info.N, Hat: it.info.Hat.ID, Backend: it.switched.To,
		Message: "every backend of the chain is out; waiting for " + it.switched.To,
		ResetAt: it.switchWait.UTC().Format(time.RFC3339), WaitMS: wait.Milliseconds()}
}

// switchBack is the backend.switched line of an iteration whose chain
// moves to another backend as it starts: an earlier one of the chain is
// available again, or a backend this chain shares with another hat's
// became unavailable there. Nil when it runs where the chain is.
func (e *Engine) switchBack(hatID string, n int, picked Backend) *runfiles.BackendSwitchedRecord {
	chain, _ := e.chain(hatID)
	if len(chain) == 1 {
		return nil
	}
	key := e.chainKey(hatID)
	prev, ok := e.st.ChainBackend[key]
	if !ok {
		prev = chain[0].Name()
	}
	if prev == picked.Name() || !inChain(chain, prev) {
		return nil
	}
	r := &runfiles.BackendSwitchedRecord{Iteration: n, Hat: hatID, Chain: key, From: prev, To: picked.Name(), Reason: runfiles.SwitchRecovered}
	if u, limited := e.st.Unavailable[prev]; limited && !u.AvailableAt(e.now()) {
		r.Reason = u.Reason
		if !u.Until.IsZero() {
			r.ResetAt = u.Until.UTC().Format(time.RFC3339)
		}
	}
	return r
}

func inChain(chain []Backend, name string) bool {
	for _, b := range chain {
		if b.Name() == name {
			return true
		}
	}
	return false
}

// chainWait is how long a rate-limited iteration with no backend left to
// move to waits: until its own reset, or an earlier one of another backend
// of its chain, whichever comes first.
func (e *Engine) chainWait(own time.Duration) time.Duration {
	chain, _ := e.chain(e.iter.info.Hat.ID)
	for _, b := range chain {
		if b.Name() == e.iter.info.Backend {
			continue
		}
		if u, ok := e.st.Unavailable[b.Name()]; ok && !u.Until.IsZero() {
			own = min(own, max(u.Until.Sub(e.now())+time.Second, time.Second))
		}
	}
	return own
}

// reportSwitch tells a reporter that wants to hear it.
func (e *Engine) reportSwitch(r runfiles.BackendSwitchedRecord) {
	if sr, ok := e.opts.Reporter.(SwitchReporter); ok {
		sr.BackendSwitched(e.iter.info, r)
	}
}

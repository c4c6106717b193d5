package runfiles

import (
	"time"

	"github.com/ralph-loop/ralph/events"
)

// TopicBackendSwitched is ralph's line saying a hat's iterations moved to
// another backend of its chain (cli.fallback): the current one hit a far
// rate limit or failed for the provider's sake, or an earlier one is
// available again.
const TopicBackendSwitched = "backend.switched"

// SwitchReason is why a hat moved to another backend, in backend.switched
// as "reason".
type SwitchReason string

// Reasons to switch backends. The first four make From unavailable; the
// last moves back to a backend that is available again.
const (
	// SwitchRateLimit: a rate or usage limit whose reset is further away
	// than fallback_after_seconds. From is unavailable until ResetAt.
	SwitchRateLimit SwitchReason = "rate_limit"
	// SwitchAuth: missing or expired credentials. From is unavailable
	// until the run is resumed: only a person logs in again, and a resume
	// is how a person says they did.
	SwitchAuth SwitchReason = "auth"
	// SwitchUnavailable: the CLI could not be run (not installed, not
	// executable). From is unavailable until the run is resumed, for the
	// same reason.
	SwitchUnavailable SwitchReason = "unavailable"
	// SwitchOverloaded: the provider's service was overloaded after the
	// CLI's own retries. From is unavailable until ResetAt
	// (fallback_after_seconds later): an overload passes by itself.
	SwitchOverloaded SwitchReason = "overloaded"
	// SwitchRecovered: To comes before From in the chain and is available
	// again (its reset passed, or the run was resumed).
	SwitchRecovered SwitchReason = "recovered"
)

// BackendSwitchedRecord is the payload of backend.switched.
type BackendSwitchedRecord struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	// Chain is the hat whose own backend heads the chain; "" for cli's,
	// which every hat without a backend of its own shares.
	Chain  string       `json:"chain,omitempty"`
	From   string       `json:"from"`
	To     string       `json:"to"`
	Reason SwitchReason `json:"reason"`
	// ResetAt is when From is available again (RFC 3339); "" until the
	// run is resumed (auth, unavailable) or for SwitchRecovered.
	ResetAt string `json:"reset_at,omitempty"`
	// Message is From's failure in a line.
	Message string `json:"message,omitempty"`
}

// Unavailable is why a backend is not tried, and until when.
type Unavailable struct {
	Reason SwitchReason `json:"reason"`
	// Until is when it is tried again; zero: once the run is resumed.
	Until time.Time `json:"until,omitzero"`
}

// AvailableAt reports whether a backend so marked may be tried at now.
func (u Unavailable) AvailableAt(now time.Time) bool {
	return !u.Until.IsZero() && !now.Before(u.Until)
}

// BackendTotal is what one backend's iterations used.
type BackendTotal struct {
	Iterations int          `json:"iterations"`
	Usage      events.Usage `json:"tokens"`
	CostUSD    float64      `json:"cost_usd"`
}

// applySwitch folds backend.switched: From is unavailable as the reason
// says, and the chain's iterations run on To.
func (s *RunState) applySwitch(r BackendSwitchedRecord) {
	if s.ChainBackend == nil {
		s.ChainBackend = map[string]string{}
	}
	s.ChainBackend[r.Chain] = r.To
	if r.Reason == SwitchRecovered {
		delete(s.Unavailable, r.To)
		return
	}
	u := Unavailable{Reason: r.Reason}
	if t, err := time.Parse(time.RFC3339, r.ResetAt); err == nil {
		u.Until = t
	}
	s.markUnavailable(r.From, u)
}

// applyLimit folds agent.rate_limited: a backend that named its reset is
// unavailable until then, so that with a chain ralph knows which of its
// backends comes back first.
func (s *RunState) applyLimit(r RateLimitedRecord) {
	if r.Backend == "" {
		return
	}
	t, err := time.Parse(time.RFC3339, r.ResetAt)
	if err != nil {
		return
	}
	s.markUnavailable(r.Backend, Unavailable{Reason: SwitchRateLimit, Until: t})
}

func (s *RunState) markUnavailable(backend string, u Unavailable) {
	if s.Unavailable == nil {
		s.Unavailable = map[string]Unavailable{}
	}
	s.Unavailable[backend] = u
}

// resumeBackends makes the backends that waited for a resume available:
// the person who resumed the run may have logged in or installed the CLI,
// and the first iteration will tell.
func (s *RunState) resumeBackends() {
	for name, u := range s.Unavailable {
		if u.Until.IsZero() {
			delete(s.Unavailable, name)
		}
	}
}

// addBackendTotal counts a finished iteration against the backend it ran
// on, when the log says which.
func (s *RunState) addBackendTotal(backend string, r IterationFinishedRecord) {
	if backend == "" {
		return
	}
	if s.ByBackend == nil {
		s.ByBackend = map[string]BackendTotal{}
	}
	t := s.ByBackend[backend]
	t.Usage = t.Usage.Add(r.Usage)
	t.CostUSD += r.CostUSD
	if r.Outcome == OutcomeSuccess || r.Outcome == OutcomeFailure {
		t.Iterations++
	}
	s.ByBackend[backend] = t
}

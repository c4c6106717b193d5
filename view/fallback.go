package view

import (
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// SwitchText is the one wording of a backend.switched line: the log's, the
// live lines', the model's last event.
func SwitchText(r runfiles.BackendSwitchedRecord) string {
	head := r.From + " → " + r.To + ": "
	until := ""
	if t, err := time.Parse(time.RFC3339, r.ResetAt); err == nil {
		until = " until " + t.UTC().Format("Jan 2 15:04 UTC")
	}
	switch r.Reason {
	case runfiles.SwitchRateLimit:
		return head + r.From + " is rate-limited" + until
	case runfiles.SwitchAuth:
		return head + r.From + "'s credentials were refused; it is tried again when the run is resumed"
	case runfiles.SwitchUnavailable:
		return head + r.From + " could not run; it is tried again when the run is resumed"
	case runfiles.SwitchOverloaded:
		return head + r.From + "'s service is overloaded; it is tried again" + until
	case runfiles.SwitchRecovered:
		return head + r.To + " is available again"
	}
	return head + string(r.Reason)
}

// unavailableText says why a backend of a chain is not tried, and until
// when.
func unavailableText(u runfiles.Unavailable) string {
	if u.Until.IsZero() {
		return string(u.Reason) + "; tried again when the run is resumed"
	}
	return string(u.Reason) + " until " + u.Until.UTC().Format("Jan 2 15:04 UTC")
}

package backends

import (
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
)

// redactingReport passes activity on with secret values hidden in its text.
func redactingReport(r *redact.Redactor, report func(events.Activity)) func(events.Activity) {
	if r.Empty() {
		return report
	}
	return func(a events.Activity) {
		a.Text = r.String(a.Text)
		a.ToolName = r.String(a.ToolName)
		a.Path = r.String(a.Path)
		a.Command = r.String(a.Command)
		report(a)
	}
}

// redactResult hides secret values in the text of a result: the final
// text (where tags are found) and the failure message (which often quotes
// the agent's stderr or an API error).
func redactResult(r *redact.Redactor, res events.AgentResult) events.AgentResult {
	res.FinalText = r.String(res.FinalText)
	res.FailureMessage = r.String(res.FailureMessage)
	return res
}

package view

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// SummaryParagraph renders a finished run's summary as one paragraph for
// stderr, with what to do next.
func SummaryParagraph(s engine.Summary) string {
	var b strings.Builder
	if s.AlreadyEnded {
		fmt.Fprintf(&b, "ralph: nothing to resume: run %s had already ended%s: %s (exit %d)", s.RunID, endedAt(s), s.Reason, s.ExitCode)
	} else {
		fmt.Fprintf(&b, "ralph: run %s ended: %s (exit %d)", s.RunID, s.Reason, s.ExitCode)
	}
	if msg := EndMessage(s.End()); msg != "" {
		fmt.Fprintf(&b, " — %s", msg)
	}
	fmt.Fprintf(&b, ". %s%s in %s", plural.Count(s.Iterations, "iteration", "iterations"), confirmationNote(false, s.Confirmations), s.Runtime.Round(time.Second))
	fmt.Fprintf(&b, ", %s, %s", plural.Count(int(s.Usage.Total()), "token", "tokens"), CostText(s.Cost))
	if by := BackendList(s.ByBackend); by != "" {
		fmt.Fprintf(&b, " (%s)", by)
	}
	if hats := hatList(s); hats != "" {
		fmt.Fprintf(&b, "; hats: %s", hats)
	}
	fmt.Fprintf(&b, "; events accepted %d, rejected %d; commits %d", s.Accepted, s.Rejected, s.Commits)
	if s.Malformed > 0 {
		fmt.Fprintf(&b, ", malformed lines %d", s.Malformed)
	}
	b.WriteString(".")
	switch {
	case s.AlreadyEnded && !s.Reason.Resumable():
		fmt.Fprintf(&b, " Start a new run with `ralph loop`; inspect this one with `%s` (log: %s).", inspect, s.EventsFile)
	case resumeAdvised(s.Reason):
		fmt.Fprintf(&b, " Resume with `%s`; inspect with `%s` (log: %s).", ResumeOf(s.EventsFile), inspect, s.EventsFile)
	default:
		fmt.Fprintf(&b, " Inspect with `%s` (log: %s).", inspect, s.EventsFile)
	}
	return b.String()
}

// endedAt is " at <time>" for a run whose end has a time, else "".
func endedAt(s engine.Summary) string {
	if s.EndedAt.IsZero() {
		return ""
	}
	return " at " + s.EndedAt.Local().Format(time.DateTime)
}

// SummaryMarkdown renders a finished run's summary for
// .ralph/runs/<run-id>/summary.md.
func SummaryMarkdown(s engine.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ralph run %s\n\n", s.RunID)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| reason | %s |\n| exit code | %d |\n", s.Reason, s.ExitCode)
	if msg := EndMessage(s.End()); msg != "" {
		fmt.Fprintf(&b, "| why | %s |\n", strings.ReplaceAll(msg, "|", "\\|"))
	}
	fmt.Fprintf(&b, "| iterations | %d%s |\n| runtime | %s |\n", s.Iterations, confirmationNote(false, s.Confirmations), s.Runtime.Round(time.Second))
	fmt.Fprintf(&b, "| tokens | %d in, %d out |\n| cost | %s |\n", s.Usage.InputTokens, s.Usage.OutputTokens, CostText(s.Cost))
	if by := BackendList(s.ByBackend); by != "" {
		fmt.Fprintf(&b, "| by backend | %s |\n", by)
	}
	fmt.Fprintf(&b, "| hat activations | %s |\n", hatList(s))
	fmt.Fprintf(&b, "| events | %d accepted, %d rejected, %d malformed |\n", s.Accepted, s.Rejected, s.Malformed)
	fmt.Fprintf(&b, "| commits | %d |\n", s.Commits)
	fmt.Fprintf(&b, "| event log | `%s` |\n\n", s.EventsFile)
	fmt.Fprintf(&b, "Inspect: `%s`", inspect)
	if resumeAdvised(s.Reason) {
		fmt.Fprintf(&b, " · resume: `%s`", ResumeOf(s.EventsFile))
	}
	b.WriteString("\n")
	return b.String()
}

// BackendList is what each backend's iterations used, "codex: 2
// iterations, 1200 tokens, $0.0300; claude: …", when more than one backend
// ran; "" when one did, as the run's totals say it all.
func BackendList(by map[string]runfiles.BackendTotal) string {
	if len(by) < 2 {
		return ""
	}
	parts := make([]string, 0, len(by))
	for _, name := range slices.Sorted(maps.Keys(by)) {
		t := by[name]
		parts = append(parts, fmt.Sprintf("%s: %s, %s, $%.4f", name, plural.Count(t.Iterations, "iteration", "iterations"),
			plural.Count(int(t.Usage.Total()), "token", "tokens"), t.CostUSD))
	}
	return strings.Join(parts, "; ")
}

func hatList(s engine.Summary) string {
	ids := make([]string, 0, len(s.Activations))
	for id := range s.Activations {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s×%d", id, s.Activations[id])
	}
	return strings.Join(parts, ", ")
}

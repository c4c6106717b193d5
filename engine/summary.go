package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
)

// Summary describes a finished run.
type Summary struct {
	RunID      string
	Reason     Reason
	ExitCode   int
	Message    string
	Iterations int
	// Confirmations is how many of the iterations confirmed a completion
	// claim; max_iterations does not count them.
	Confirmations int
	Runtime       time.Duration
	CostUSD       float64
	Usage         events.Usage
	Activations   map[string]int
	Accepted      int
	Rejected      int
	Malformed     int
	Commits       int
	EventsFile    string
	Workspace     string
}

func (e *Engine) summary() Summary {
	st := e.st
	if st == nil {
		return Summary{}
	}
	sum := Summary{RunID: st.RunID, Iterations: st.Iteration, Confirmations: st.ConfirmationIterations, Runtime: st.Runtime(e.now()),
		CostUSD: st.CostUSD, Usage: st.Usage, Activations: st.Activations, Accepted: st.Accepted,
		Rejected: st.Rejected, Malformed: st.MalformedTotal, Commits: st.Commits, EventsFile: st.EventsFile, Workspace: e.opts.Workspace}
	if t := st.Terminated; t != nil {
		sum.Reason, sum.ExitCode, sum.Message = t.Reason, t.ExitCode, e.opts.Redactor.String(t.Message)
	}
	return sum
}

// Paragraph renders the summary as one paragraph for stderr.
func (s Summary) Paragraph() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ralph: run %s ended: %s (exit %d)", s.RunID, s.Reason, s.ExitCode)
	if s.Message != "" {
		fmt.Fprintf(&b, " — %s", s.Message)
	}
	fmt.Fprintf(&b, ". %s%s in %s", plural.Count(s.Iterations, "iteration", "iterations"), s.confirmationNote(), s.Runtime.Round(time.Second))
	fmt.Fprintf(&b, ", %s, $%.4f", plural.Count(int(s.Usage.Total()), "token", "tokens"), s.CostUSD)
	if hats := s.hatList(); hats != "" {
		fmt.Fprintf(&b, "; hats: %s", hats)
	}
	fmt.Fprintf(&b, "; events accepted %d, rejected %d; commits %d", s.Accepted, s.Rejected, s.Commits)
	if s.Malformed > 0 {
		fmt.Fprintf(&b, ", malformed lines %d", s.Malformed)
	}
	b.WriteString(".")
	if s.Reason.Resumable() && !s.Reason.SaysHowToGoOn() {
		fmt.Fprintf(&b, " Resume with `ralph loop --resume`; inspect with `ralph events` (log: %s).", s.EventsFile)
	} else {
		fmt.Fprintf(&b, " Inspect with `ralph events` (log: %s).", s.EventsFile)
	}
	return b.String()
}

// confirmationNote says how many iterations confirmed a claim, if any:
// without it, a run that ran more iterations than max_iterations allows
// would look like a bug.
func (s Summary) confirmationNote() string {
	if s.Confirmations == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d confirming a completion claim, not counted against max_iterations)", s.Confirmations)
}

func (s Summary) hatList() string {
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

// Markdown renders the summary for .ralph/runs/<run-id>/summary.md.
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ralph run %s\n\n", s.RunID)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| reason | %s |\n| exit code | %d |\n", s.Reason, s.ExitCode)
	if s.Message != "" {
		fmt.Fprintf(&b, "| why | %s |\n", strings.ReplaceAll(s.Message, "|", "\\|"))
	}
	fmt.Fprintf(&b, "| iterations | %d%s |\n| runtime | %s |\n", s.Iterations, s.confirmationNote(), s.Runtime.Round(time.Second))
	fmt.Fprintf(&b, "| tokens | %d in, %d out |\n| cost | $%.4f |\n", s.Usage.InputTokens, s.Usage.OutputTokens, s.CostUSD)
	fmt.Fprintf(&b, "| hat activations | %s |\n", s.hatList())
	fmt.Fprintf(&b, "| events | %d accepted, %d rejected, %d malformed |\n", s.Accepted, s.Rejected, s.Malformed)
	fmt.Fprintf(&b, "| commits | %d |\n", s.Commits)
	fmt.Fprintf(&b, "| event log | `%s` |\n\n", s.EventsFile)
	b.WriteString("Inspect: `ralph events`")
	if s.Reason.Resumable() && !s.Reason.SaysHowToGoOn() {
		b.WriteString(" · resume: `ralph loop --resume`")
	}
	b.WriteString("\n")
	return b.String()
}

func (e *Engine) writeSummary(s Summary) {
	dir := filepath.Join(e.dir, RunsDir, s.RunID)
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = writeFileAtomic(filepath.Join(dir, "summary.md"), []byte(s.Markdown()))
		if err != nil {
			e.opts.Reporter.Warn("cannot write the run summary: " + err.Error())
		}
	}
}

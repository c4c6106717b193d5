package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// textReporter prints plain timestamped lines: what a log file or a
// terminal without a live view shows.
type textReporter struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

func newTextReporter(w io.Writer) *textReporter {
	return &textReporter{w: w, now: time.Now}
}

func (r *textReporter) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "%s "+format+"\n", append([]any{r.now().Format("15:04:05")}, args...)...)
}

func (r *textReporter) LoopStarted(run engine.RunInfo) {
	verb := "started"
	if run.Resumed {
		verb = "resumed"
	}
	hats := "none (the coordinator does the work)"
	if len(run.Hats) > 0 {
		hats = strings.Join(run.Hats, ", ")
	}
	r.printf("run %s %s; objective from %s; hats: %s; log %s", run.RunID, verb, orDash(run.Source), hats, run.EventsFile)
}

func (r *textReporter) IterationStarted(it engine.IterationInfo) {
	what := "hat " + it.Hat.ID
	if it.Confirming {
		what = "confirming the completion claim"
	}
	r.printf("iteration %d/%d: %s (%s)", it.N, it.Max, what, it.Backend)
}

func (r *textReporter) Activity(_ engine.IterationInfo, a events.Activity) {
	switch a.Kind {
	case events.ActivityText:
		for _, line := range strings.Split(strings.TrimRight(a.Text, "\n"), "\n") {
			if strings.TrimSpace(line) != "" {
				r.printf("  | %s", line)
			}
		}
	case events.ActivityTool:
		r.printf("  %s %s", a.Tool, toolTarget(a))
	case events.ActivityError:
		r.printf("  agent error: %s", a.Text)
	case events.ActivityRateLimit:
		r.printf("  rate limited: %s", a.Text)
	case events.ActivityUsage:
	}
}

func toolTarget(a events.Activity) string {
	switch {
	case a.Command != "":
		return firstLine(a.Command)
	case a.Path != "":
		return a.Path
	}
	return a.ToolName
}

func (r *textReporter) EventAccepted(ev events.Event, to []string) {
	dest := "coordinator"
	if len(to) > 0 {
		dest = strings.Join(to, ", ")
	}
	r.printf("  event %s -> %s", ev.Topic, dest)
}

func (r *textReporter) EventRejected(ev events.Event, reason string) {
	r.printf("  event %s rejected: %s", ev.Topic, reason)
}

func (r *textReporter) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	status := "done"
	if res.Failure != events.FailureNone {
		status = res.Failure + ": " + res.FailureMessage
	}
	r.printf("iteration %d %s in %s; %d tokens, $%.4f; %d reads, %d writes, %d shell",
		it.N, status, res.Duration.Round(time.Millisecond), res.Usage.Total(), res.CostUSD,
		res.Tools.Read, res.Tools.Write, res.Tools.Shell)
}

func (r *textReporter) Commit(_ engine.IterationInfo, c engine.Commit) {
	r.printf("  commit %s %s", shortHash(c.Hash), c.Subject)
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

func (r *textReporter) RateLimited(it engine.IterationInfo, wait time.Duration) {
	r.printf("rate limited in iteration %d; waiting %s, then repeating it", it.N, wait.Round(time.Second))
}

func (r *textReporter) Warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "ralph: warning: %s\n", msg)
}

func (r *textReporter) LoopFinished(sum engine.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.w, sum.Paragraph())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

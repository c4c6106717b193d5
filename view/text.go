package view

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// Options are the loop command's choices about how much to show.
type Options struct {
	Quiet   bool // hide the agent's own text
	Verbose bool // also show each prompt
}

// Text prints plain timestamped lines: what a log file or a
// terminal without a live view shows. Every line is one Write, so a writer
// that redraws a panel around each line (the live view) sees whole lines.
type Text struct {
	mu    sync.Mutex
	w     io.Writer
	model *Model // for the commits listed at the end
	now   func() time.Time
	opts  Options
	buf   []byte // the line being printed, under mu
}

// NewText prints a run's lines on w, as a view of m: m must be fed the
// same reports first (see Tee).
func NewText(w io.Writer, m *Model, now func() time.Time, opts Options) *Text {
	return &Text{w: w, model: m, now: now, opts: opts}
}

func (r *Text) printf(format string, args ...any) {
	r.line("", fmt.Sprintf(format, args...))
}

// line prints a timestamped line of prefix (plain text) and text. It is
// built in a buffer the Text keeps, because one is printed for each line
// of the agent's text.
func (r *Text) line(prefix, text string) {
	text = Sanitize(text)
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.now().AppendFormat(r.buf[:0], "15:04:05")
	b = append(append(append(append(b, ' '), prefix...), text...), '\n')
	_, _ = r.w.Write(b)
	r.buf = b
}

// raw prints a line without a timestamp (warnings, the summary).
func (r *Text) raw(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.w, Sanitize(line))
}

func (r *Text) LoopStarted(run engine.RunInfo) {
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

func (r *Text) IterationStarted(it engine.IterationInfo) {
	if it.Confirming {
		// It may run past max_iterations, which does not count it: "2/1"
		// would read as a bug.
		r.printf("iteration %d: confirming the completion claim, not counted against max_iterations (%s)", it.N, it.Backend)
	} else {
		r.printf("iteration %d/%d: hat %s (%s)", it.N, it.Max, it.Hat.ID, it.Backend)
	}
	if r.opts.Verbose {
		r.printf("  prompt:")
		r.lines("  > ", it.Prompt)
	}
}

// lines prints each non-blank line of text with a prefix (plain text).
func (r *Text) lines(prefix, text string) {
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			r.line(prefix, line)
		}
	}
}

func (r *Text) Activity(_ engine.IterationInfo, a events.Activity) {
	switch a.Kind {
	case events.ActivityText:
		if !r.opts.Quiet {
			r.lines("  | ", a.Text)
		}
	case events.ActivityTool:
		r.printf("  %s %s", a.Tool, toolTarget(a))
	case events.ActivityError:
		r.printf("  agent error: %s", a.Text)
	case events.ActivityRateLimit:
		r.printf("  rate limited: %s", a.Text)
	case events.ActivityWarning:
		r.printf("  warning: %s", a.Text)
	case events.ActivityUsage:
	}
}

func toolTarget(a events.Activity) string {
	switch {
	case a.Command != "":
		return FirstLine(a.Command)
	case a.Path != "":
		return a.Path
	}
	return a.ToolName
}

func (r *Text) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	r.printf("  event %s", routeText(ev.Topic, to, as))
}

// routeText is "topic → hat, hat", the way every view shows a routing, or
// what a topic that ends the run did.
func routeText(topic string, to []string, as runfiles.Disposition) string {
	switch as {
	case runfiles.AsClaim:
		return topic + ": completion claimed; a fresh agent will check it"
	case runfiles.AsCompletion:
		return topic + ": completion accepted"
	case runfiles.AsCancellation:
		return topic + ": run cancelled"
	case runfiles.AsQuestion:
		return topic + ": the run waits for a person's answer"
	case runfiles.AsRoute:
	}
	dest := "coordinator"
	if len(to) > 0 {
		dest = strings.Join(to, ", ")
	}
	return topic + " → " + dest
}

func (r *Text) EventRejected(ev events.Event, reason string) {
	r.printf("  event %s rejected: %s", ev.Topic, reason)
}

func (r *Text) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	status := "done"
	switch outcomeOf(it, res) {
	case runfiles.OutcomeInterrupted:
		status = "interrupted"
	case runfiles.OutcomeRateLimited:
		status = "rate-limited"
	case runfiles.OutcomeSwitched:
		status = "failed for the provider's sake (" + string(res.Failure) + "): " + res.FailureMessage
	case runfiles.OutcomeFailure:
		status = string(res.Failure) + ": " + res.FailureMessage
	case runfiles.OutcomeSuccess:
	}
	r.printf("iteration %d %s in %s; %s, %s; %s, %s, %d shell",
		it.N, status, res.Duration.Round(time.Millisecond), plural.Count(int(res.Usage.Total()), "token", "tokens"), iterationCostText(iterationCost(it, res)),
		plural.Count(res.Tools.Read, "read", "reads"), plural.Count(res.Tools.Write, "write", "writes"), res.Tools.Shell)
}

func (r *Text) Commit(_ engine.IterationInfo, c engine.Commit) {
	r.printf("  commit %s %s", shortHash(c.Hash), c.Subject)
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

func (r *Text) RateLimited(it engine.IterationInfo, wait time.Duration) {
	r.printf("rate limited in iteration %d; waiting %s, then repeating it", it.N, wait.Round(time.Second))
}

// WaveProgress reports a wave's start and each worker's end.
func (r *Text) WaveProgress(it engine.IterationInfo, w runfiles.WaveProgress) {
	r.printf("iteration %d: %s", it.N, WaveText(w))
}

// Paced reports that the next iteration waits for a pacing budget.
func (r *Text) Paced(p runfiles.PacedRecord) {
	r.printf("%s; the next iteration waits", PacedText(p))
}

// BackendSwitched reports that the run goes on with another backend of its
// chain.
func (r *Text) BackendSwitched(it engine.IterationInfo, sw runfiles.BackendSwitchedRecord) {
	r.printf("iteration %d (%s): %s", sw.Iteration, sw.Hat, SwitchText(sw))
}

// TaskComplete reports a SPEC.md checkbox the agent checked; index counts
// the spec's boxes from 0.
func (r *Text) TaskComplete(index int, text string) {
	r.printf("task %d done: %s", index+1, text)
}

// Stuck reports that iterations stopped making progress.
func (r *Text) Stuck(end runfiles.Termination, withoutProgress int) {
	r.printf("stuck after %s without progress: %s", plural.Count(withoutProgress, "iteration", "iterations"), EndMessage(end))
}

func (r *Text) Warn(msg string) {
	r.raw("ralph: warning: " + msg)
}

// Notice says what the run is doing, without crying wolf.
func (r *Text) Notice(msg string) {
	r.raw("ralph: " + msg)
}

func (r *Text) LoopFinished(sum engine.Summary) {
	r.raw(SummaryParagraph(sum))
	if line := commitsLine(r.model.Run().Commits); line != "" {
		r.raw(line)
	}
}

// commitsLine lists the commits this process saw, for the end of a run: the
// engine's summary counts what happened, this says what was committed.
func commitsLine(commits []engine.Commit) string {
	if len(commits) == 0 {
		return ""
	}
	const show = 5
	parts := make([]string, 0, show)
	for i, c := range commits {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(commits)-show))
			break
		}
		parts = append(parts, shortHash(c.Hash)+" "+Clip(c.Subject, 50))
	}
	return fmt.Sprintf("ralph: %s: %s", plural.Count(len(commits), "commit", "commits"), strings.Join(parts, "; "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// humanCount renders a token count the way the views show it: 950, 1.2k,
// 3.4M.
func humanCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// humanDuration is a duration rounded for people: 850ms, 12s, 3m04s, 1h02m.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

package engine

import (
	"slices"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// The engine hides secret values (Options.Redactor) in everything it
// writes or reports that text from outside ralph can reach:
//
//   - the payload of every line it appends: tags from the agent's text,
//     iteration.finished with its failure message, criteria evidence in
//     .blocked events, commit subjects;
//   - every line it reads back before folding it into the state (its
//     payload, topic, target and hat), so lines the agent appended to the
//     log by hand (which ralph cannot stop) do not reach state.json,
//     prompts, the summary or the reporters;
//   - every string it hands a Reporter.
//
// What the agent produces is already redacted by the backend; doing it here
// too costs a scan and makes the guarantee the engine's own.

// redactEvents hides secret values in the payloads of lines about to be
// appended.
func (e *Engine) redactEvents(lines []events.Event) {
	for i := range lines {
		lines[i].Payload = e.opts.Redactor.JSON(lines[i].Payload)
	}
}

// redactRecord hides secret values in a line read from the log. The line's
// bytes stay as they are: they locate it in the file.
func (e *Engine) redactRecord(rec events.Record) events.Record {
	if rec.Err == nil {
		rec.Event = redactEvent(e.opts.Redactor, rec.Event)
	}
	return rec
}

// redactEvent hides secret values in what of an event text from outside
// ralph can reach: its payload, and the topic, target and hat a line the
// agent wrote by hand may hold (a topic made of a key is rejected as a
// bad topic, under its redacted name).
func redactEvent(r *redact.Redactor, ev events.Event) events.Event {
	ev.Payload = r.JSON(ev.Payload)
	ev.Topic, ev.Target, ev.Hat = r.String(ev.Topic), r.String(ev.Target), r.String(ev.Hat)
	return ev
}

// redactingReporter passes every call on to a Reporter with the secret
// values hidden in its text. It does not embed Reporter, so a method added
// to Reporter fails to compile here until it is redacted too.
type redactingReporter struct {
	to Reporter
	r  *redact.Redactor
}

var (
	_ Reporter       = redactingReporter{}
	_ StuckReporter  = redactingReporter{}
	_ SwitchReporter = redactingReporter{}
	_ WaveReporter   = redactingReporter{}
	_ TaskReporter   = redactingReporter{}
)

func (x redactingReporter) LoopStarted(run RunInfo) {
	run.Objective = x.r.String(run.Objective)
	x.to.LoopStarted(run)
}

func (x redactingReporter) IterationStarted(it IterationInfo) {
	x.to.IterationStarted(x.iteration(it))
}

func (x redactingReporter) Activity(it IterationInfo, a events.Activity) {
	a.Text = x.r.String(a.Text)
	a.ToolName = x.r.String(a.ToolName)
	a.Path = x.r.String(a.Path)
	a.Command = x.r.String(a.Command)
	x.to.Activity(x.iteration(it), a)
}

func (x redactingReporter) EventAccepted(ev events.Event, to []string, as runfiles.Disposition) {
	x.to.EventAccepted(redactEvent(x.r, ev), to, as)
}

func (x redactingReporter) EventRejected(ev events.Event, reason string) {
	x.to.EventRejected(redactEvent(x.r, ev), x.r.String(reason))
}

func (x redactingReporter) IterationFinished(it IterationInfo, res events.AgentResult) {
	res.FinalText = x.r.String(res.FinalText)
	res.FailureMessage = x.r.String(res.FailureMessage)
	x.to.IterationFinished(x.iteration(it), res)
}

func (x redactingReporter) Commit(it IterationInfo, c Commit) {
	c.Subject = x.r.String(c.Subject)
	x.to.Commit(x.iteration(it), c)
}

func (x redactingReporter) RateLimited(it IterationInfo, wait time.Duration) {
	x.to.RateLimited(x.iteration(it), wait)
}

func (x redactingReporter) Warn(msg string) { x.to.Warn(x.r.String(msg)) }

// Notice reaches the Reporter only if it wants it.
func (x redactingReporter) Notice(msg string) {
	if nr, ok := x.to.(NoticeReporter); ok {
		nr.Notice(x.r.String(msg))
	}
}

func (x redactingReporter) LoopFinished(sum Summary) {
	sum.Message = x.r.String(sum.Message)
	x.to.LoopFinished(sum)
}

// WaveProgress reaches the Reporter only if it wants it.
func (x redactingReporter) WaveProgress(it IterationInfo, w runfiles.WaveProgress) {
	if wr, ok := x.to.(WaveReporter); ok {
		wr.WaveProgress(x.iteration(it), w)
	}
}

// BackendSwitched reaches the Reporter only if it wants it.
func (x redactingReporter) BackendSwitched(it IterationInfo, r runfiles.BackendSwitchedRecord) {
	if sr, ok := x.to.(SwitchReporter); ok {
		r.Message = x.r.String(r.Message)
		sr.BackendSwitched(x.iteration(it), r)
	}
}

// Stuck and TaskComplete reach the Reporter only if it wants them.
func (x redactingReporter) Stuck(end runfiles.Termination, withoutProgress int) {
	if sr, ok := x.to.(StuckReporter); ok {
		end.Message = x.r.String(end.Message)
		sr.Stuck(end, withoutProgress)
	}
}

// WaitingForHuman and HumanAnswered reach it only if it wants them too.
func (x redactingReporter) WaitingForHuman(q runfiles.Question) {
	if hr, ok := x.to.(HumanReporter); ok {
		hr.WaitingForHuman(x.question(q))
	}
}

func (x redactingReporter) HumanAnswered(q runfiles.Question, r Reply) {
	if hr, ok := x.to.(HumanReporter); ok {
		r.Text = x.r.String(r.Text)
		hr.HumanAnswered(x.question(q), r)
	}
}

func (x redactingReporter) question(q runfiles.Question) runfiles.Question {
	q.Text = x.r.String(q.Text)
	q.Options = slices.Clone(q.Options)
	for i, o := range q.Options {
		q.Options[i] = x.r.String(o)
	}
	return q
}

func (x redactingReporter) TaskComplete(index int, text string) {
	if tr, ok := x.to.(TaskReporter); ok {
		tr.TaskComplete(index, x.r.String(text))
	}
}

// iteration hides secret values in the prompt, which quotes events, the
// scratchpad and memories: all text the agent wrote.
func (x redactingReporter) iteration(it IterationInfo) IterationInfo {
	it.Prompt = x.r.String(it.Prompt)
	return it
}

// notice tells the Reporter, if it wants it, what the run is doing.
func (e *Engine) notice(msg string) {
	if nr, ok := e.opts.Reporter.(NoticeReporter); ok {
		nr.Notice(msg)
	}
}

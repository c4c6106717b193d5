package engine

import (
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// What a run does when a question's deadline passes (human.on_timeout).
const (
	OnTimeoutContinue = "continue" // the next prompt says no answer came
	OnTimeoutStop     = "stop"     // the run ends with ReasonNoAnswer
)

// Reply is how a question was closed: a person's answer, or its deadline.
type Reply struct {
	Text     string
	By       string
	TimedOut bool
}

// HumanReporter is a Reporter that also wants to hear that the run waits
// for a person, and how the wait ended.
type HumanReporter interface {
	WaitingForHuman(q runfiles.Question)
	HumanAnswered(q runfiles.Question, r Reply)
}

// questionTimeout is the wait a question allows: its own --timeout, else
// human.timeout_seconds.
func (e *Engine) questionTimeout(ev events.Event) time.Duration {
	var r runfiles.AskedRecord
	if runfiles.Decode(ev, &r) && r.TimeoutSeconds > 0 {
		return time.Duration(r.TimeoutSeconds) * time.Second
	}
	return e.opts.Settings.Human.Timeout
}

// decideQuestions decides the questions of a settle step, after the other
// events, so that a completion claim in the same batch is known. The
// latest question is asked; earlier ones are rejected as superseded, and
// one asked beside a completion claim is rejected: the run would not wait
// for an answer it ends without.
func (e *Engine) decideQuestions(b *batch, asked []runfiles.UndecidedEvent) {
	for i, u := range asked {
		q := runfiles.QuestionOf(u, 0)
		switch {
		case i < len(asked)-1:
			e.reject(b, u, runfiles.RejectSuperseded, "a later question replaced it; only the last question of an iteration is asked")
		case q.Text == "":
			e.reject(b, u, runfiles.RejectInvalidQuestion, "the question is empty")
		case e.claimedIn(b):
			e.reject(b, u, runfiles.RejectCompletionClaimed,
				"completion was claimed in the same iteration; ask before claiming, and claim once the answer is in")
		default:
			timeout := e.questionTimeout(u.Event)
			e.acceptQuestion(b, u, timeout)
		}
	}
}

func (e *Engine) acceptQuestion(b *batch, u runfiles.UndecidedEvent, timeout time.Duration) {
	hat := runfiles.AskingHat(u.Event)
	b.add(runfiles.RalphEvent(runfiles.TopicEventRouted, runfiles.RoutedRecord{Offset: u.Offset, Topic: u.Event.Topic, To: []string{hat},
		As: runfiles.AsQuestion, TimeoutMS: timeout.Milliseconds()}))
	b.accepted = append(b.accepted, u.Event)
	b.decided = append(b.decided, u.Event)
	b.reports = append(b.reports, func() { e.opts.Reporter.EventAccepted(u.Event, []string{hat}, runfiles.AsQuestion) })
}

// claimedIn reports whether the batch accepted the completion topic, as a
// completion or as a claim to confirm.
func (e *Engine) claimedIn(b *batch) bool {
	for _, ev := range b.accepted {
		if ev.Topic == e.opts.Settings.CompletionTopic {
			return true
		}
	}
	return b.completed
}

package view

import (
	"strings"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/runfiles"
)

// A run waiting for a person, in every view: the model holds the question,
// the plain lines say how to answer it, the headless stream has
// waiting_for_human and human_answered.

// WaitingForHuman notes the question the run waits on.
func (m *Model) WaitingForHuman(q runfiles.Question) {
	m.update(func(r *Run) { r.Question, r.Phase, r.PhaseSince = &q, PhaseAwaitingHuman, m.now() })
}

// HumanAnswered notes that the wait is over.
func (m *Model) HumanAnswered(q runfiles.Question, reply engine.Reply) {
	m.update(func(r *Run) {
		r.Question, r.Phase, r.PhaseSince = nil, PhaseBetween, m.now()
		r.LastEvent = answerText(q, reply)
	})
}

func (t tee) WaitingForHuman(q runfiles.Question) {
	for _, r := range t {
		r.WaitingForHuman(q)
	}
}

func (t tee) HumanAnswered(q runfiles.Question, reply engine.Reply) {
	for _, r := range t {
		r.HumanAnswered(q, reply)
	}
}

// A question is essential: whoever reads stderr is the person to answer it.
func (e essentials) WaitingForHuman(q runfiles.Question) { e.r.WaitingForHuman(q) }
func (e essentials) HumanAnswered(q runfiles.Question, reply engine.Reply) {
	e.r.HumanAnswered(q, reply)
}

// WaitingForHuman prints the question and how to answer it.
func (r *Text) WaitingForHuman(q runfiles.Question) {
	r.printf("waiting for a person: %s (hat %s) asks: %s", q.ID, q.Hat, q.Text)
	if len(q.Options) > 0 {
		r.printf("  options: %s", strings.Join(q.Options, " | "))
	}
	until := "until answered"
	if !q.Deadline.IsZero() {
		until = "until " + q.Deadline.Local().Format(time.DateTime)
	}
	r.printf("  answer with: ralph answer %s \"TEXT\"   (waiting %s)", q.ID, until)
}

func (r *Text) HumanAnswered(q runfiles.Question, reply engine.Reply) {
	r.printf("%s", answerText(q, reply))
}

func answerText(q runfiles.Question, reply engine.Reply) string {
	if reply.TimedOut {
		return q.ID + ": no answer by the deadline"
	}
	return q.ID + " answered by " + reply.By + ": " + reply.Text
}

// headAnswered: the wait is over, answered or timed out.
type headAnswered struct {
	ID       string `json:"id"`
	Answer   string `json:"answer,omitempty"`
	By       string `json:"by,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
}

func (r *Headless) WaitingForHuman(q runfiles.Question) {
	// The question's own JSON is the event's: id, question, options,
	// hat, iteration, asked_at and deadline.
	r.emit("waiting_for_human", q)
}

func (r *Headless) HumanAnswered(q runfiles.Question, reply engine.Reply) {
	r.emit("human_answered", headAnswered{ID: q.ID, Answer: reply.Text, By: reply.By, TimedOut: reply.TimedOut})
}

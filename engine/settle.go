package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
)

// batch collects the lines one settle step appends in a single write.
type batch struct {
	lines []events.Event
	// accepted are the agent events accepted in this batch.
	accepted []events.Event
	// completed is set when a completion or cancellation was accepted.
	completed bool
	notes     []string
}

func (b *batch) add(ev events.Event) { b.lines = append(b.lines, ev) }

func (b *batch) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// settling decides every undecided agent event and publishes the
// consequences of the last finished iteration, in one write.
func (e *Engine) settling() (State, error) {
	if err := e.fold(); err != nil {
		return "", err
	}
	var b batch
	for _, u := range slices.Clone(e.st.Undecided) {
		e.decide(&b, u)
	}
	e.consequences(&b)
	if err := e.append(b.lines...); err != nil {
		return "", err
	}
	return StateChecking, e.saveAs(StateChecking)
}

// decide accepts or rejects one agent event.
func (e *Engine) decide(b *batch, u UndecidedEvent) {
	ev := u.Event
	s := e.opts.Settings
	if err := events.ValidateTopic(ev.Topic); err != nil {
		e.reject(b, u, rejectInvalidTopic, err.Error())
		return
	}
	if isReservedForRalph(ev.Topic) {
		e.reject(b, u, rejectReserved, "topics under loop., iteration. and event., and task.resume, are ralph's own")
		return
	}
	if e.outOfScope(ev) {
		h := e.hat(ev.Hat)
		e.reject(b, u, rejectScope, fmt.Sprintf("%s may publish only %s", h.ID, strings.Join(h.Publishes, ", ")))
		b.add(ralphEvent(ev.Hat+suffixScopeViolation, fmt.Sprintf(
			"Hat %s published %q, which is outside its publishes list (%s). The event was dropped.",
			ev.Hat, ev.Topic, strings.Join(h.Publishes, ", "))))
		return
	}
	switch ev.Topic {
	case s.CancellationTopic:
		e.accept(b, u, nil, AsCancellation)
	case s.CompletionTopic:
		e.decideCompletion(b, u)
	default:
		e.accept(b, u, e.opts.Hats.Route(ev), AsRoute)
	}
}

// outOfScope reports whether hat scope is enforced and the event's hat may
// not publish its topic. The coordinator may publish anything.
func (e *Engine) outOfScope(ev events.Event) bool {
	if !e.opts.Settings.EnforceHatScope || ev.Hat == "" || ev.Hat == hats.CoordinatorID {
		return false
	}
	h, ok := e.opts.Hats.Get(ev.Hat)
	if !ok || len(h.Publishes) == 0 {
		return false
	}
	for _, p := range h.Publishes {
		if events.Match(p, ev.Topic) {
			return false
		}
	}
	return true
}

// decideCompletion judges a completion claim: required events first, then
// the confirmation rule.
func (e *Engine) decideCompletion(b *batch, u UndecidedEvent) {
	if missing := e.missingRequired(b); len(missing) > 0 {
		e.reject(b, u, rejectRequiredEventsMiss, strings.Join(missing, ", "))
		b.add(ralphEvent(TopicTaskResume, fmt.Sprintf(
			"Completion was claimed, but these required events have not been published yet: %s. "+
				"Do the work that produces them before claiming completion again.", strings.Join(missing, ", "))))
		return
	}
	if e.opts.Settings.Confirmations <= 1 || e.isConfirmation(u.Event) {
		e.accept(b, u, nil, AsCompletion)
		return
	}
	e.accept(b, u, nil, AsClaim)
	b.add(ralphEvent(TopicCompletionConfirm, confirmingRecord{Claim: u.Event.PayloadText()}))
}

// isConfirmation reports whether ev was published by the confirmation
// iteration that checked an earlier claim.
func (e *Engine) isConfirmation(ev events.Event) bool {
	last := e.st.LastFinished
	return e.st.Confirming != nil && last != nil && last.Confirming && ev.Iteration == last.Iteration
}

func (e *Engine) missingRequired(b *batch) []string {
	var missing []string
	for _, t := range e.opts.Settings.RequiredEvents {
		if e.st.Seen(t) || slices.ContainsFunc(b.accepted, func(ev events.Event) bool { return ev.Topic == t }) {
			continue
		}
		missing = append(missing, t)
	}
	return missing
}

func (e *Engine) accept(b *batch, u UndecidedEvent, to []string, as string) {
	if to == nil {
		to = []string{}
	}
	b.add(ralphEvent(TopicEventRouted, routedRecord{Offset: u.Offset, Topic: u.Event.Topic, To: to, As: as}))
	b.accepted = append(b.accepted, u.Event)
	if as == AsCompletion || as == AsCancellation {
		b.completed = true
	}
	e.opts.Reporter.EventAccepted(u.Event, to)
}

func (e *Engine) reject(b *batch, u UndecidedEvent, reason, detail string) {
	b.add(ralphEvent(TopicEventRejected, rejectedRecord{Offset: u.Offset, Topic: u.Event.Topic, Reason: reason, Detail: detail}))
	b.note("Your event %q was rejected (%s): %s", u.Event.Topic, reason, detail)
	e.opts.Reporter.EventRejected(u.Event, reason+": "+detail)
}

// consequences publishes what follows from the last finished iteration, once.
func (e *Engine) consequences(b *batch) {
	last := e.st.LastFinished
	if last == nil || last.Iteration <= e.st.Settled {
		return
	}
	switch {
	case last.Outcome != OutcomeSuccess:
		b.note("The previous attempt (iteration %d, hat %s) failed: %s. Its events are still pending; try again, differently if the cause is in your approach.",
			last.Iteration, last.Hat, last.Message)
	case last.Confirming && !b.completed:
		verdict := "A fresh agent checked the completion claim and did not confirm it."
		if last.Said != "" {
			verdict += " It said:\n\n" + last.Said + "\n\n"
		}
		b.add(ralphEvent(TopicTaskResume, verdict+"Find what is still missing, finish it, and claim completion again only when all of it is done."))
		b.note("The completion claim was not confirmed by the confirmation iteration.")
	case !last.Confirming && !e.publishedIn(b, last.Iteration):
		e.defaultPublish(b, last)
	default:
		b.note("Iteration %d (hat %s) published %s.", last.Iteration, last.Hat, e.publishedTopics(b, last.Iteration))
	}
	b.add(ralphEvent(TopicIterationSettled, iterationSettledRecord{Iteration: last.Iteration, Note: strings.Join(b.notes, "\n")}))
}

func (e *Engine) publishedTopics(b *batch, n int) string {
	var topics []string
	for _, ev := range b.accepted {
		if ev.Iteration == n {
			topics = append(topics, ev.Topic)
		}
	}
	return strings.Join(topics, ", ")
}

// publishedIn reports whether an event the agent wrote in iteration n was
// accepted in this batch.
func (e *Engine) publishedIn(b *batch, n int) bool {
	return slices.ContainsFunc(b.accepted, func(ev events.Event) bool { return ev.Iteration == n })
}

// defaultPublish publishes a hat's default_publishes when its agent
// published nothing. A default never completes a run: when the default is
// the completion topic, control goes back to the coordinator instead.
func (e *Engine) defaultPublish(b *batch, last *FinishedIteration) {
	h := e.hat(last.Hat)
	if h.DefaultPublishes == "" {
		b.note("Iteration %d (hat %s) published no event.", last.Iteration, last.Hat)
		return
	}
	if h.DefaultPublishes == e.opts.Settings.CompletionTopic {
		b.add(ralphEvent(TopicTaskResume, fmt.Sprintf(
			"Hat %s published nothing; its default is the completion topic, which ralph never publishes on an agent's behalf. "+
				"Check whether the objective is done and publish %s yourself if it is.", h.ID, e.opts.Settings.CompletionTopic)))
		return
	}
	ev := ralphEvent(h.DefaultPublishes, fmt.Sprintf("Published by default for hat %s, whose agent published nothing.", h.ID))
	ev.Hat = h.ID
	ev.Iteration = last.Iteration
	b.add(ev)
}

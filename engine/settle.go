package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// batch collects the lines one settle step appends in a single write.
type batch struct {
	lines []events.Event
	// accepted are the agent events accepted in this batch; decided are
	// all agent events decided in it, accepted or not.
	accepted []events.Event
	decided  []events.Event
	// completed is set when a completion or cancellation was accepted.
	completed bool
	notes     []string
	// reports tell the reporter what was decided, once the batch is
	// written: a batch abandoned on interrupt is decided again on resume
	// and must not be reported twice.
	reports []func()
}

func (b *batch) add(ev events.Event) { b.lines = append(b.lines, ev) }

func (b *batch) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// settling decides every undecided agent event and publishes the
// consequences of the last finished iteration, in one write.
func (e *Engine) settling(ctx context.Context) (runfiles.Phase, error) {
	if err := e.fold(); err != nil {
		return "", err
	}
	var b batch
	var asked []runfiles.UndecidedEvent
	for _, u := range slices.Clone(e.st.Undecided) {
		if runfiles.IsQuestion(u.Event) {
			// No publishes list or gate applies to a question.
			asked = append(asked, u)
			continue
		}
		e.decide(ctx, &b, u)
	}
	e.decideQuestions(&b, asked)
	e.consequences(ctx, &b)
	if ctx.Err() != nil {
		// Criteria cut short by an interrupt prove nothing: write no
		// decision, so the events are decided on resume.
		return runfiles.PhaseChecking, nil
	}
	if err := e.append(b.lines...); err != nil {
		return "", err
	}
	for _, report := range b.reports {
		report()
	}
	return runfiles.PhaseChecking, nil
}

// decide accepts or rejects one agent event.
func (e *Engine) decide(ctx context.Context, b *batch, u runfiles.UndecidedEvent) {
	ev := u.Event
	s := e.opts.Settings
	if err := events.ValidateTopic(ev.Topic); err != nil {
		e.reject(b, u, runfiles.RejectInvalidTopic, err.Error())
		return
	}
	if runfiles.ReservedForRalph(ev.Topic) {
		e.reject(b, u, runfiles.RejectReserved, "topics under loop., iteration. and event., task.resume, human.answered and human.timed_out are ralph's own")
		return
	}
	if problem := e.unknownTarget(ev); problem != "" {
		e.reject(b, u, runfiles.RejectUnknownTarget, problem)
		return
	}
	if e.outOfScope(ev) {
		h := e.hat(ev.Hat)
		e.reject(b, u, runfiles.RejectScope, fmt.Sprintf("%s may publish only %s", h.ID, strings.Join(h.Publishes, ", ")))
		b.add(runfiles.RalphEvent(ev.Hat+runfiles.SuffixScopeViolation, fmt.Sprintf(
			"Hat %s published %q, which is outside its publishes list (%s). The event was dropped.",
			ev.Hat, ev.Topic, strings.Join(h.Publishes, ", "))))
		return
	}
	if failed := e.checkGates(ctx, ev); failed != "" {
		e.block(b, u, failed)
		return
	}
	switch ev.Topic {
	case s.CancellationTopic:
		e.accept(b, u, nil, runfiles.AsCancellation)
	case s.CompletionTopic:
		e.decideCompletion(ctx, b, u)
	default:
		e.accept(b, u, e.opts.Hats.Route(ev), runfiles.AsRoute)
	}
}

// unknownTarget says what is wrong with an event's target, or "" when it
// has none or names a hat. A target naming no hat is a typo or the wrong
// case; routing the event by its topic instead would hand it to a hat the
// agent did not choose.
func (e *Engine) unknownTarget(ev events.Event) string {
	if ev.Target == "" {
		return ""
	}
	var unknown *hats.UnknownHatError
	if !errors.As(e.opts.Hats.CheckHatID(ev.Target), &unknown) {
		return ""
	}
	return unknown.Error() + " (" + unknown.Hint() + ")"
}

// block rejects an event that failed its gate and sends <topic>.blocked,
// with the evidence, back to the hat that published it.
func (e *Engine) block(b *batch, u runfiles.UndecidedEvent, report string) {
	first, _, _ := strings.Cut(report, "\n")
	e.reject(b, u, runfiles.RejectGateFailed, first)
	blocked := runfiles.RalphEvent(u.Event.Topic+runfiles.SuffixBlocked, report)
	if _, ok := e.opts.Hats.Get(u.Event.Hat); ok && u.Event.Hat != "" {
		blocked.Target = u.Event.Hat
	}
	// The blocked event carries the evidence to the hat; the note only
	// says that it happened.
	b.add(blocked)
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
func (e *Engine) decideCompletion(ctx context.Context, b *batch, u runfiles.UndecidedEvent) {
	if missing := e.missingRequired(b); len(missing) > 0 {
		e.reject(b, u, runfiles.RejectRequiredEventsMiss, strings.Join(missing, ", "))
		b.add(runfiles.RalphEvent(runfiles.TopicTaskResume, fmt.Sprintf(
			"Completion was claimed, but these required events have not been published yet: %s. "+
				"Do the work that produces them before claiming completion again.", strings.Join(missing, ", "))))
		return
	}
	if e.specPath() != "" && !e.specDone() {
		done, total := checklist.Counts(e.specItems())
		open := fmt.Sprintf("%d of %s", total-done, plural.Count(total, "box", "boxes"))
		isAre := plural.Word(total-done, "is", "are")
		e.reject(b, u, runfiles.RejectCriteriaFailed, fmt.Sprintf("%s of the spec %s still open", open, isAre))
		b.add(runfiles.RalphEvent(runfiles.TopicTaskResume, fmt.Sprintf("Completion was claimed, but %s of %s %s still open. "+
			"The run ends when every box is checked.", open, e.opts.Settings.SpecFile, isAre)))
		return
	}
	if specs := e.opts.Settings.AcceptanceCriteria; len(specs) > 0 {
		// ralph's own check of the criteria is the second confirmation.
		v := e.judge(ctx, u.Event.Hat, specs)
		if !v.passed() {
			report := v.report("completion rejected")
			first, _, _ := strings.Cut(report, "\n")
			e.reject(b, u, runfiles.RejectCriteriaFailed, first)
			b.add(runfiles.RalphEvent(runfiles.TopicCompletionRejected, report))
			b.note("%s", report)
			return
		}
		v.ignored(b)
		e.accept(b, u, nil, runfiles.AsCompletion)
		return
	}
	if e.opts.Settings.Confirmations <= 1 || e.isConfirmation(u.Event) {
		e.accept(b, u, nil, runfiles.AsCompletion)
		return
	}
	e.accept(b, u, nil, runfiles.AsClaim)
	b.add(runfiles.RalphEvent(runfiles.TopicCompletionConfirm, runfiles.ConfirmingRecord{Claim: u.Event.PayloadText()}))
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

func (e *Engine) accept(b *batch, u runfiles.UndecidedEvent, to []string, as runfiles.Disposition) {
	if to == nil {
		to = []string{}
	}
	b.add(runfiles.RalphEvent(runfiles.TopicEventRouted, runfiles.RoutedRecord{Offset: u.Offset, Topic: u.Event.Topic, To: to, As: as}))
	b.accepted = append(b.accepted, u.Event)
	b.decided = append(b.decided, u.Event)
	if as == runfiles.AsCompletion || as == runfiles.AsCancellation {
		b.completed = true
	}
	b.reports = append(b.reports, func() { e.opts.Reporter.EventAccepted(u.Event, to, as) })
}

func (e *Engine) reject(b *batch, u runfiles.UndecidedEvent, reason runfiles.RejectReason, detail string) {
	b.add(runfiles.RalphEvent(runfiles.TopicEventRejected, runfiles.RejectedRecord{Offset: u.Offset, Topic: u.Event.Topic, Reason: reason, Detail: detail}))
	b.decided = append(b.decided, u.Event)
	b.note("Your event %q was rejected (%s): %s", u.Event.Topic, reason, detail)
	b.reports = append(b.reports, func() { e.opts.Reporter.EventRejected(u.Event, string(reason)+": "+detail) })
}

// consequences publishes what follows from the last finished iteration, once.
func (e *Engine) consequences(ctx context.Context, b *batch) {
	last := e.st.LastFinished
	if last == nil || last.Iteration <= e.st.Settled {
		return
	}
	if e.opts.Settings.VerifyEveryIteration && last.Outcome == runfiles.OutcomeSuccess && !b.completed {
		e.verifyIteration(ctx, b, last)
	}
	if e.specPath() != "" && !b.completed && e.specDone() {
		b.add(runfiles.RalphEvent(runfiles.TopicCompletionVerified, runfiles.VerifiedRecord{Iteration: last.Iteration, By: runfiles.VerifiedBySpec}))
		b.completed = true
	}
	wave := e.st.LastWave
	switch {
	case wave != nil && wave.Iteration == last.Iteration && last.Outcome != runfiles.OutcomeSuccess:
		// A wave is not run again for its failed workers; what they
		// would have published is missing, and the next hats are told.
		b.note("%s", last.Message)
	case last.Outcome != runfiles.OutcomeSuccess:
		b.note("The previous attempt (iteration %d, hat %s) failed: %s. Its events are still pending; try again, differently if the cause is in your approach.",
			last.Iteration, last.Hat, last.Message)
	case last.Confirming && !b.completed:
		verdict := "A fresh agent checked the completion claim and did not confirm it."
		if last.Said != "" {
			verdict += " It said:\n\n" + last.Said + "\n\n"
		}
		b.add(runfiles.RalphEvent(runfiles.TopicTaskResume, verdict+"Find what is still missing, finish it, and claim completion again only when all of it is done."))
		b.note("The completion claim was not confirmed by the confirmation iteration.")
	case !last.Confirming && !e.wroteIn(b, last.Iteration):
		e.defaultPublish(ctx, b, last)
	case !last.Confirming && !e.publishedIn(b, last.Iteration):
		b.note("Iteration %d (hat %s) had no event accepted.", last.Iteration, last.Hat)
	default:
		b.note("Iteration %d (hat %s) published %s.", last.Iteration, last.Hat, e.publishedTopics(b, last.Iteration))
	}
	b.add(runfiles.RalphEvent(runfiles.TopicIterationSettled, runfiles.IterationSettledRecord{Iteration: last.Iteration,
		Note: strings.Join(b.notes, "\n"), Progress: e.progressed(b, last)}))
}

// progressed reports whether an iteration moved the run forward: an event
// of its was accepted, it changed a file, or it made a commit.
func (e *Engine) progressed(b *batch, last *runfiles.FinishedIteration) bool {
	if e.specPath() != "" {
		// In SPEC mode only a newly checked box is progress.
		return last.TasksDone > 0 || b.completed
	}
	return e.publishedIn(b, last.Iteration) || last.Changed || last.Commits > 0 || b.completed
}

// verifyIteration checks the acceptance criteria after an iteration when
// they, not a claim, decide completion (a ralph.json task file; see
// docs/architecture.md#ralphjson-task-files).
func (e *Engine) verifyIteration(ctx context.Context, b *batch, last *runfiles.FinishedIteration) {
	v := e.judge(ctx, last.Hat, e.opts.Settings.AcceptanceCriteria)
	if v.passed() {
		v.ignored(b)
		b.add(runfiles.RalphEvent(runfiles.TopicCompletionVerified, runfiles.VerifiedRecord{Iteration: last.Iteration, By: runfiles.VerifiedByCriteria}))
		b.completed = true
		return
	}
	b.note("%s", v.report("acceptance criteria not met yet"))
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

// wroteIn reports whether the agent of iteration n wrote any event, accepted
// or not.
func (e *Engine) wroteIn(b *batch, n int) bool {
	return slices.ContainsFunc(b.decided, func(ev events.Event) bool { return ev.Iteration == n })
}

// publishedIn reports whether an event the agent wrote in iteration n was
// accepted in this batch.
func (e *Engine) publishedIn(b *batch, n int) bool {
	return slices.ContainsFunc(b.accepted, func(ev events.Event) bool { return ev.Iteration == n })
}

// defaultPublish publishes a hat's default_publishes when its agent
// published nothing. A default never completes a run: when the default is
// the completion topic, control goes back to the coordinator instead.
func (e *Engine) defaultPublish(ctx context.Context, b *batch, last *runfiles.FinishedIteration) {
	h := e.hat(last.Hat)
	if h.DefaultPublishes == "" {
		b.note("Iteration %d (hat %s) published no event.", last.Iteration, last.Hat)
		return
	}
	if h.DefaultPublishes == e.opts.Settings.CompletionTopic {
		b.add(runfiles.RalphEvent(runfiles.TopicTaskResume, fmt.Sprintf(
			"Hat %s published nothing; its default is the completion topic, which ralph never publishes on an agent's behalf. "+
				"Check whether the objective is done and publish %s yourself if it is.", h.ID, e.opts.Settings.CompletionTopic)))
		return
	}
	ev := runfiles.RalphEvent(h.DefaultPublishes, fmt.Sprintf("Published by default for hat %s, whose agent published nothing.", h.ID))
	ev.Hat = h.ID
	ev.Iteration = last.Iteration
	// A default passes the same gates as the event it stands for.
	if failed := e.checkGates(ctx, ev); failed != "" {
		blocked := runfiles.RalphEvent(ev.Topic+runfiles.SuffixBlocked, failed)
		blocked.Target = h.ID
		b.add(blocked)
		return
	}
	b.add(ev)
}

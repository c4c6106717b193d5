package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// collecting records what the agent did: the events it wrote as tags in
// its final text, then iteration.finished, in one write.
func (e *Engine) collecting() (runfiles.Phase, error) {
	it := &e.iter
	res, info := it.result, it.info
	outcome := it.outcome()
	info.Cost = priceIteration(e.opts.Prices, res, it.backend)
	res.CostUSD = info.Cost.USD
	var lines []events.Event
	if outcome == runfiles.OutcomeSuccess || outcome == runfiles.OutcomeFailure {
		if err := e.fold(); err != nil {
			return "", err
		}
		lines = append(lines, e.tagEvents(res.FinalText)...)
	}
	switch {
	case it.switched != nil:
		lines = append(lines, runfiles.RalphEvent(runfiles.TopicBackendSwitched, *it.switched))
		if !it.switchWait.IsZero() {
			lines = append(lines, runfiles.RalphEvent(runfiles.TopicRateLimited, e.switchWaitRecord()))
		}
	case outcome == runfiles.OutcomeRateLimited:
		lines = append(lines, runfiles.RalphEvent(runfiles.TopicRateLimited, e.rateLimitRecord()))
	}
	// Read with a context of its own: the run's may be cancelled, and
	// what the agent changed must still be recorded.
	rctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	after := e.snapshot(rctx)
	commits := e.commitEvents(rctx, it.before, after)
	lines = append(lines, commits...)
	tasks := e.taskEvents()
	lines = append(lines, tasks...)
	lines = append(lines, runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{
		Iteration: info.N, Hat: info.Hat.ID, Outcome: outcome, ExitCode: res.ExitCode,
		Failure: res.Failure, Message: res.FailureMessage, DurationMS: res.Duration.Milliseconds(),
		Usage: res.Usage, CostUSD: res.CostUSD, CostSource: info.Cost.Source, Model: info.Cost.Model, Tools: res.Tools, Confirming: info.Confirming,
		Said: tail(res.FinalText, saidLimit), Commits: len(commits), TasksDone: len(tasks),
		Changed: it.before.Fingerprint != after.Fingerprint, Trees: e.trees(rctx, it, after),
	}))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	e.lastSnapshot = &after
	info.Outcome = outcome
	e.warnUnknownCost(info.Cost, res.Usage)
	e.opts.Reporter.IterationFinished(info, res)
	switch {
	case e.ending != nil:
		return runfiles.PhaseTerminating, e.saveAs(runfiles.PhaseTerminating)
	case it.switched != nil:
		// The same iteration runs again, on the next backend: selecting
		// picks it, as the fold of backend.switched says; once it is
		// back, when it is out too.
		e.reportSwitch(*it.switched)
		e.rateWaits = 0
		if !it.switchWait.IsZero() {
			return runfiles.PhaseWaiting, e.saveAs(runfiles.PhaseWaiting)
		}
		return runfiles.PhaseChecking, nil
	case outcome == runfiles.OutcomeRateLimited:
		return runfiles.PhaseWaiting, e.saveAs(runfiles.PhaseWaiting)
	}
	e.rateWaits = 0
	return runfiles.PhaseSettling, nil
}

// tagEvents turns the <event> tags of the agent's final text into events.
// A tag that repeats an event the agent already wrote with `ralph emit`
// (same topic and payload) is the fallback the prompt asked for, not a
// second event.
func (e *Engine) tagEvents(text string) []events.Event {
	var out []events.Event
	for _, tag := range events.ParseTags(text) {
		if e.emitted(tag) {
			continue
		}
		out = append(out, events.Event{Topic: tag.Topic, Payload: events.StringPayload(tag.Payload),
			Iteration: e.iter.info.N, Hat: e.iter.info.Hat.ID, Source: events.SourceTag, Target: tag.Target})
	}
	if ev, ok := e.promisedCompletion(text, out); ok {
		out = append(out, ev)
	}
	return out
}

// promisedCompletion reads an agent's <promise>COMPLETE</promise> (the
// sigil other loops teach agents), or <promise>TOPIC</promise> with the
// completion topic, as the completion claim, judged as one: once per
// iteration, and not beside a claim the agent made as an event.
func (e *Engine) promisedCompletion(text string, tagged []events.Event) (events.Event, bool) {
	topic := e.opts.Settings.CompletionTopic
	if topic == "" || slices.ContainsFunc(tagged, func(ev events.Event) bool { return ev.Topic == topic }) {
		return events.Event{}, false
	}
	for _, u := range e.st.Undecided {
		if u.Event.Iteration == e.iter.info.N && u.Event.Topic == topic {
			return events.Event{}, false
		}
	}
	for _, p := range events.Promises(text) {
		if p == events.PromiseComplete || p == topic {
			return events.Event{Topic: topic, Payload: events.StringPayload("<promise>" + p + "</promise>"),
				Iteration: e.iter.info.N, Hat: e.iter.info.Hat.ID, Source: events.SourceTag}, true
		}
	}
	return events.Event{}, false
}

func (e *Engine) emitted(tag events.Tag) bool {
	for _, u := range e.st.Undecided {
		if u.Event.Iteration == e.iter.info.N && u.Event.Topic == tag.Topic &&
			strings.TrimSpace(u.Event.PayloadText()) == strings.TrimSpace(tag.Payload) {
			return true
		}
	}
	return false
}

// saidLimit bounds how much of an agent's final message is kept for the
// next prompt: enough for a verdict and its reasons.
const saidLimit = 1500

// tail returns the last n bytes of s, starting at a line when it can.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := s[len(s)-n:]
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		cut = cut[i+1:]
	}
	return "…" + cut
}

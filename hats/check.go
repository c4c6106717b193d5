package hats

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// Severity says whether a [Finding] makes a configuration unusable.
type Severity string

const (
	// SeverityError is a topology that cannot work as written: ralph
	// validate exits 3.
	SeverityError Severity = "error"
	// SeverityWarning is a topology that works, but probably not as meant.
	SeverityWarning Severity = "warning"
)

// The rules [Check] applies, named in each [Finding].
const (
	RuleUnreachableHat    = "unreachable-hat"
	RuleNoCompletionPath  = "no-completion-path"
	RuleRequiredEvent     = "required-event-unpublished"
	RuleUnknownCriterion  = "unknown-criterion"
	RuleUnhandledTopic    = "unhandled-topic"
	RuleAmbiguousTrigger  = "ambiguous-triggers"
	RuleGateNeverApplies  = "gate-never-applies"
	RuleDefaultCompletion = "default-publishes-completion"
	RuleAggregateNoWave   = "aggregate-without-wave"
)

// Finding is one problem with a hat topology.
type Finding struct {
	Severity Severity
	Rule     string
	Hat      string // the hat concerned; "" when the finding is not about one
	Topic    string // the topic concerned
	Where    string // "file:line" when the checks know it (gates); else ""
	Message  string
	Hint     string
}

func (f Finding) String() string { return f.Message }

// Check finds the mistakes in a hat topology that would otherwise show up
// only as a stalled or endless run. Errors come first, each rule in turn,
// hats in config order.
//
// # Reachability
//
// A hat is reachable when a chain of hand-offs leads to it from the
// starting event. The starting event goes to its first receiver, or to the
// coordinator when no hat triggers on it. A hat hands off each topic in its
// publishes and default_publishes to that topic's first receiver in config
// order (one hat handles each event); a hat without publishes may publish
// anything, so it hands off what [Registry.Routes] offers it: every exact
// trigger of the other hats, and the completion topic. When a gate on a
// topic fails, <topic>.blocked goes back to the hat that published it.
//
// The coordinator may publish any topic, so counting it whenever it could
// run would make every hat reachable and hide every broken hand-off. It
// counts only when it takes the starting event: then it is the designed
// entry point, and it hands off every exact trigger and the completion
// topic. A published topic nobody triggers on also ends at the coordinator
// at run time, but that is reported as [RuleUnhandledTopic] rather than
// counted as a hand-off.
//
// # Rules
//
// Errors: a hat no chain reaches ([RuleUnreachableHat]); no reachable hat
// hands off the completion topic ([RuleNoCompletionPath]); a required event
// no hat publishes, so completion could never be accepted
// ([RuleRequiredEvent]); a gate naming a criterion type not in
// t.Criteria ([RuleUnknownCriterion]).
//
// Warnings: a hat publishes a topic no hat triggers on and that is neither
// the completion nor the cancellation topic ([RuleUnhandledTopic]); two
// hats trigger on overlapping patterns, so one of them never gets the
// topics both match ([RuleAmbiguousTrigger]); a gate matches no topic that
// could be published, so it never applies ([RuleGateNeverApplies]); a
// hat's default_publishes is the completion topic, which ralph never
// publishes for an agent ([RuleDefaultCompletion]); a hat with aggregate:
// triggers on nothing a wave hat publishes, so it has no wave to wait for
// ([RuleAggregateNoWave]).
func Check(r *Registry, t Topology) []Finding {
	a := analyze(r, t)
	var out []Finding
	out = append(out, a.unreachable()...)
	out = append(out, a.noCompletionPath()...)
	out = append(out, a.unpublishedRequired()...)
	out = append(out, a.unknownCriteria()...)
	out = append(out, a.unhandled()...)
	out = append(out, a.ambiguous()...)
	out = append(out, a.idleGates()...)
	out = append(out, a.defaultCompletion()...)
	out = append(out, a.aggregateNoWave()...)
	return out
}

// aggregateNoWave warns of an aggregator no wave hat feeds: its aggregate:
// would never wait for anything, which is not what its author meant.
func (a *analysis) aggregateNoWave() []Finding {
	var out []Finding
	for _, h := range a.r.hats {
		if h.Aggregate == nil {
			continue
		}
		fed := slices.ContainsFunc(a.r.hats, func(w Hat) bool {
			return w.Waves() && slices.ContainsFunc(w.Publishes, func(p string) bool { return matchesAny(h.Triggers, p) })
		})
		if fed {
			continue
		}
		out = append(out, Finding{Severity: SeverityWarning, Rule: RuleAggregateNoWave, Hat: h.ID,
			Message: fmt.Sprintf("hat %q has aggregate:, but no hat with concurrency above 1 publishes a topic it triggers on, so it has no wave's results to wait for", h.ID),
			Hint:    "give the hat that publishes its trigger concurrency: N (and that topic in its publishes), or remove aggregate:"})
	}
	return out
}

// defaultCompletion warns of a default_publishes that is the completion
// topic: ralph never claims completion for an agent that said nothing, so
// the default is never published.
func (a *analysis) defaultCompletion() []Finding {
	var out []Finding
	for _, h := range a.r.hats {
		if h.DefaultPublishes == "" || h.DefaultPublishes != a.t.CompletionTopic {
			continue
		}
		out = append(out, Finding{Severity: SeverityWarning, Rule: RuleDefaultCompletion, Hat: h.ID, Topic: h.DefaultPublishes,
			Message: fmt.Sprintf("hat %q has default_publishes: %s, the completion topic, which ralph never publishes on an agent's behalf: "+
				"when its agent publishes nothing, the coordinator is asked to check the objective instead", h.ID, h.DefaultPublishes),
			Hint: fmt.Sprintf("have the agent publish %s itself; set default_publishes to a topic another hat takes, or remove it", h.DefaultPublishes)})
	}
	return out
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity == SeverityError })
}

func (a *analysis) unreachable() []Finding {
	var out []Finding
	flow := a.flowTopics()
	for _, h := range a.r.hats {
		if a.reached[h.ID] {
			continue
		}
		f := Finding{Severity: SeverityError, Rule: RuleUnreachableHat, Hat: h.ID, Topic: h.Triggers[0],
			Hint: "publish one of its triggers from a hat that runs (add it to that hat's publishes), or change its triggers"}
		f.Message, f.Topic = a.whyUnreachable(h, flow)
		out = append(out, f)
	}
	return out
}

// whyUnreachable explains why no hand-off reaches h: a topic that matches
// its triggers goes to another hat first, or nothing reachable publishes
// one. It returns the message and the topic it is about.
func (a *analysis) whyUnreachable(h Hat, flow []string) (string, string) {
	for _, topic := range flow {
		if !matchesAny(h.Triggers, topic) {
			continue
		}
		owner := a.ownerOf(topic)
		switch owner {
		case DoneNode:
			return fmt.Sprintf("hat %q is unreachable: its trigger matches %q, the completion topic, which ends the run instead of going to a hat",
				h.ID, topic), topic
		case CancelNode:
			return fmt.Sprintf("hat %q is unreachable: its trigger matches %q, the cancellation topic, which ends the run instead of going to a hat",
				h.ID, topic), topic
		}
		return fmt.Sprintf("hat %q is unreachable: %q, which its triggers match, goes to hat %q, the first in config order",
			h.ID, topic, owner), topic
	}
	return fmt.Sprintf("hat %q is unreachable: nothing reachable from the starting event %q publishes a topic matching its triggers (%s)",
		h.ID, a.t.StartingEvent, strings.Join(h.Triggers, ", ")), h.Triggers[0]
}

// flowTopics are the starting event and every topic a reached node hands
// off, in walk order.
func (a *analysis) flowTopics() []string {
	topics := []string{a.t.StartingEvent}
	for _, id := range a.order {
		for _, e := range a.handOffs(id) {
			// <topic>.blocked goes back to its publisher, never to a hat
			// that triggers on it.
			if e.Kind != EdgeBlocked && !slices.Contains(topics, e.Topic) {
				topics = append(topics, e.Topic)
			}
		}
	}
	return topics
}

// ownerOf is the node an untargeted event on topic goes to.
func (a *analysis) ownerOf(topic string) string {
	if topic == a.t.StartingEvent {
		return a.entry
	}
	return a.edge("", topic, EdgePublish).To
}

func (a *analysis) noCompletionPath() []Finding {
	if a.completes {
		return nil
	}
	var hats []string
	for _, id := range a.order {
		if id != CoordinatorID {
			hats = append(hats, id)
		}
	}
	reached := "no hat takes it"
	if len(hats) > 0 {
		reached = "it reaches " + strings.Join(hats, ", ")
	}
	return []Finding{{Severity: SeverityError, Rule: RuleNoCompletionPath, Topic: a.t.CompletionTopic,
		Message: fmt.Sprintf("no path from the starting event %q to the completion topic %q: %s, and none of them publishes %q",
			a.t.StartingEvent, a.t.CompletionTopic, reached, a.t.CompletionTopic),
		Hint: fmt.Sprintf("add %s to the publishes of the hat that finishes the work", a.t.CompletionTopic)}}
}

// publishable is every topic a hat, or the coordinator when it takes the
// starting event, may hand off, and the starting event.
func (a *analysis) publishable() []string {
	topics := []string{a.t.StartingEvent}
	ids := []string{CoordinatorID}
	for _, h := range a.r.hats {
		ids = append(ids, h.ID)
	}
	for _, id := range ids {
		for _, e := range a.handOffs(id) {
			if e.Kind != EdgeBlocked && !slices.Contains(topics, e.Topic) {
				topics = append(topics, e.Topic)
			}
		}
	}
	return topics
}

func (a *analysis) unpublishedRequired() []Finding {
	var out []Finding
	topics := a.publishable()
	for _, req := range a.t.RequiredEvents {
		if slices.ContainsFunc(topics, func(p string) bool { return events.Match(p, req) }) {
			continue
		}
		out = append(out, Finding{Severity: SeverityError, Rule: RuleRequiredEvent, Topic: req,
			Message: fmt.Sprintf("required event %q is published by no hat, so a completion claim would never be accepted", req),
			Hint:    "add it to the publishes of the hat that produces it, or remove it from event_loop.required_events"})
	}
	return out
}

func (a *analysis) unknownCriteria() []Finding {
	if a.t.Criteria == nil {
		return nil
	}
	var out []Finding
	for _, g := range a.t.Gates {
		for _, c := range g.Criteria {
			if slices.Contains(a.t.Criteria, c) {
				continue
			}
			out = append(out, Finding{Severity: SeverityError, Rule: RuleUnknownCriterion, Hat: g.Hat, Topic: g.Topic, Where: g.Where,
				Message: fmt.Sprintf("%sgate on %q names unknown criterion %q", hatPrefix(g.Hat), g.Topic, c),
				Hint:    "use one of: " + strings.Join(a.t.Criteria, ", ")})
		}
	}
	return out
}

func hatPrefix(hat string) string {
	if hat == "" {
		return ""
	}
	return fmt.Sprintf("hat %q: ", hat)
}

func (a *analysis) unhandled() []Finding {
	var out []Finding
	for _, h := range a.r.hats {
		for _, e := range a.handOffs(h.ID) {
			if e.Kind != EdgeUnhandled {
				continue
			}
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleUnhandledTopic, Hat: h.ID, Topic: e.Topic,
				Message: fmt.Sprintf("hat %q publishes %q, but no hat triggers on it: the coordinator would take it", h.ID, e.Topic),
				Hint:    fmt.Sprintf("add %s to the triggers of the hat that should act on it, or remove it from %s's publishes", e.Topic, h.ID)})
		}
	}
	return out
}

// ambiguous finds pairs of hats whose triggers overlap: an event both
// match goes to the first in config order, and the other never sees it.
func (a *analysis) ambiguous() []Finding {
	var out []Finding
	hs := a.r.hats
	for i := range hs {
		for j := i + 1; j < len(hs); j++ {
			out = append(out, a.overlaps(hs[i], hs[j])...)
		}
	}
	return out
}

func (a *analysis) overlaps(first, second Hat) []Finding {
	var out []Finding
	for _, p := range first.Triggers {
		for _, q := range second.Triggers {
			topic, ok := overlap(p, q)
			if !ok {
				continue
			}
			to := a.r.Receivers(topic)
			if !slices.Contains(to, first.ID) || !slices.Contains(to, second.ID) {
				continue // the catch-all "*" yields to a specific pattern
			}
			out = append(out, Finding{Severity: SeverityWarning, Rule: RuleAmbiguousTrigger, Hat: second.ID, Topic: topic,
				Message: fmt.Sprintf("hats %q (%s) and %q (%s) both trigger on %q: ralph routes it to %q, the first in config order, and %q never gets it",
					first.ID, p, second.ID, q, topic, Owner(to), second.ID),
				Hint: "narrow one of the triggers so that each topic has one hat, or move the hat that should get it first"})
		}
	}
	return out
}

// overlap returns a topic both patterns match, and whether there is one.
// Where both have '*' in a segment the result keeps '*', which Match reads
// as a segment like any other, so it can be passed to Receivers.
func overlap(p, q string) (string, bool) {
	if p == events.Wildcard || q == events.Wildcard {
		if p == q {
			return p, true
		}
		if p == events.Wildcard {
			return q, true
		}
		return p, true
	}
	ps, qs := strings.Split(p, "."), strings.Split(q, ".")
	if len(ps) != len(qs) {
		return "", false
	}
	segs := make([]string, len(ps))
	for i := range ps {
		switch {
		case ps[i] == qs[i] || qs[i] == events.Wildcard:
			segs[i] = ps[i]
		case ps[i] == events.Wildcard:
			segs[i] = qs[i]
		default:
			return "", false
		}
	}
	return strings.Join(segs, "."), true
}

// idleGates finds gates no publishable topic matches.
func (a *analysis) idleGates() []Finding {
	var out []Finding
	all := append(a.publishable(), a.t.CompletionTopic)
	for _, g := range a.t.Gates {
		topics, whose := all, "no hat publishes a topic matching it"
		if g.Hat != "" {
			topics, whose = a.publishedBy(g.Hat), "the hat publishes no topic matching it"
		}
		if slices.ContainsFunc(topics, func(t string) bool { return events.Match(g.Topic, t) }) {
			continue
		}
		out = append(out, Finding{Severity: SeverityWarning, Rule: RuleGateNeverApplies, Hat: g.Hat, Topic: g.Topic, Where: g.Where,
			Message: fmt.Sprintf("%sgate on %q never applies: %s", hatPrefix(g.Hat), g.Topic, whose),
			Hint:    "name a topic the hats publish (check the spelling), or remove the gate"})
	}
	return out
}

func (a *analysis) publishedBy(hat string) []string {
	h, ok := a.r.Get(hat)
	if !ok {
		return nil
	}
	var topics []string
	for _, p := range a.published(h) {
		topics = append(topics, p.topic)
	}
	return topics
}

func matchesAny(patterns []string, topic string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return events.Match(p, topic) })
}

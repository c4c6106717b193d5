package hats

import (
	"bytes"

	"github.com/ralph-loop/ralph/events"
)

// Selection is the hat that runs next and the pending events it handles.
type Selection struct {
	Hat Hat
	// Events are the pending events this hat handles, oldest first (in the
	// order they were pending).
	Events []events.Event
}

// Choose picks the hat for the next iteration from pending, which must be in
// log order, oldest first.
//
// Every event has one owner: the hat its Target names, if that is a known
// hat (a configured hat or the coordinator); otherwise its first receiver in
// config order (see [Registry.Route]); otherwise the coordinator. Then:
//
//  1. Targeted events first: the oldest event with a Target naming a known
//     hat picks that hat.
//  2. Otherwise the oldest pending event picks its owner.
//  3. The chosen hat takes every pending event it owns, oldest first.
//
// Guidance floats (see [Floats]): it picks no hat while another event is
// pending, and whichever hat is chosen takes it, once.
//
// So the chosen hat always takes the event that picked it, and only a
// targeted event jumps the queue. Step 2 is strict on purpose:
// skipping an unrouted oldest event for a later routed one would starve the
// coordinator for as long as the other hats keep handing work to each other.
//
// Ownership, rather than "every event routed to the chosen hat", decides
// step 3 so that an event two hats trigger on (say "build.done" and
// "build.*") always goes to the same hat, the first in config order, however
// the other pending events happen to fall. Events are not fanned out: one
// hat handles each.
//
// Choose depends only on the order of pending and of the configuration,
// never on timestamps, map order or time, so the same log always yields the
// same choice. No pending events at all gives the coordinator with none; the
// engine then injects [ReservedResumeTopic].
func (r *Registry) Choose(pending []events.Event) Selection {
	id := r.pick(pending)
	h, _ := r.Get(id) // pick returns only known IDs
	return Selection{Hat: h, Events: r.ownedBy(id, pending)}
}

// pick returns the ID of the hat that runs next.
func (r *Registry) pick(pending []events.Event) string {
	for _, ev := range pending {
		if ev.Target != "" && r.known(ev.Target) {
			return ev.Target
		}
	}
	for _, ev := range pending {
		if !Floats(ev, r.Route(ev)) {
			return r.owner(ev)
		}
	}
	return CoordinatorID
}

// Floats reports whether ev, routed to to (what [Registry.Route] returned
// for it), goes to whichever hat runs next rather than to an owner: a
// person's [GuidanceTopic] with no target that no hat triggers on. Owned by
// the coordinator, it would wait while the other hats hand work to each
// other, and a person steering the run means the iteration that comes next.
// A hat that triggers on it, or a target, owns it as any event.
func Floats(ev events.Event, to []string) bool {
	return ev.Topic == GuidanceTopic && ev.Target == "" && len(to) == 0
}

// Owner returns the ID of the one hat that handles an event routed to to
// (what [Registry.Route] returned for it): its first receiver, or the
// coordinator when nobody receives it. Events are not fanned out: this is
// the one rule for which hat owns an event, here and in the engine.
func Owner(to []string) string {
	if len(to) == 0 {
		return CoordinatorID
	}
	return to[0]
}

// owner returns the ID of the one hat that handles ev. Route sends an
// event targeted at a known hat to that hat alone (the coordinator by
// routing it to nobody), so the target wins.
func (r *Registry) owner(ev events.Event) string {
	return Owner(r.Route(ev))
}

// ownedBy returns the events of pending that hat id owns, in order.
func (r *Registry) ownedBy(id string, pending []events.Event) []events.Event {
	var out []events.Event
	for _, ev := range pending {
		if to := r.Route(ev); Owner(to) == id || Floats(ev, to) {
			out = append(out, ev)
		}
	}
	return out
}

// Remaining returns pending without the events sel took, in order: what is
// still pending after the selected hat's iteration. sel.Events are matched
// against pending as a subsequence, so events appended to pending after
// Choose stay pending even when they are routed to the selected hat.
func (r *Registry) Remaining(pending []events.Event, sel Selection) []events.Event {
	var out []events.Event
	taken := sel.Events
	for _, ev := range pending {
		if len(taken) > 0 && sameEvent(ev, taken[0]) {
			taken = taken[1:]
			continue
		}
		out = append(out, ev)
	}
	return out
}

// sameEvent compares every field; Event holds a RawMessage and so is not
// comparable with ==.
func sameEvent(a, b events.Event) bool {
	return a.TS.Equal(b.TS) && a.Topic == b.Topic && bytes.Equal(a.Payload, b.Payload) &&
		a.Iteration == b.Iteration && a.Hat == b.Hat && a.Source == b.Source && a.Target == b.Target
}

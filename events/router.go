package events

import "slices"

// Subscription is one hat's interest in topics: the hat's ID and its trigger
// patterns (see Match).
type Subscription struct {
	Hat      string
	Triggers []string
}

// Router decides which hats receive an event. It is immutable after NewRouter and
// safe for concurrent use.
//
// The rule, in order:
//  1. An event whose Target names a subscribed hat goes to that hat only.
//  2. Otherwise it goes to every hat with a specific trigger (any pattern but
//     "*") that matches its topic.
//  3. If no hat takes it that way, it goes to every hat subscribed to "*".
//
// Hats come back in subscription (configuration) order, so the same log
// always routes the same way.
type Router struct {
	subs []Subscription
	hats map[string]bool
}

// NewRouter returns a Router for subs, given in configuration order. A hat listed
// twice keeps its first position.
func NewRouter(subs []Subscription) *Router {
	r := &Router{hats: make(map[string]bool, len(subs))}
	for _, s := range subs {
		r.hats[s.Hat] = true
		r.subs = append(r.subs, Subscription{Hat: s.Hat, Triggers: slices.Clone(s.Triggers)})
	}
	return r
}

// HasHat reports whether id is a subscribed hat. Route ignores a Target that
// names no subscribed hat; the caller uses HasHat to report such a target.
func (r *Router) HasHat(id string) bool { return r.hats[id] }

// Route returns the hats that receive ev, in subscription order, or nil if
// none does. See Router for the rule.
func (r *Router) Route(ev Event) []string {
	if ev.Target != "" && r.HasHat(ev.Target) {
		return []string{ev.Target}
	}
	return r.Receivers(ev.Topic)
}

// Receivers returns the hats that receive an untargeted event on topic, in
// subscription order, or nil if none does. Prompts use it to tell a hat who
// will hear what it publishes.
func (r *Router) Receivers(topic string) []string {
	if hats := r.matching(topic, Specific); len(hats) > 0 {
		return hats
	}
	return r.matching(topic, func(p string) bool { return !Specific(p) })
}

// matching lists, once each, the hats with a trigger that passes keep and
// matches topic.
func (r *Router) matching(topic string, keep func(pattern string) bool) []string {
	var hats []string
	for _, s := range r.subs {
		if slices.Contains(hats, s.Hat) {
			continue
		}
		for _, p := range s.Triggers {
			if keep(p) && Match(p, topic) {
				hats = append(hats, s.Hat)
				break
			}
		}
	}
	return hats
}

package hats

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// Registry is the validated set of configured hats plus the built-in
// coordinator, and the routing of topics to them. It is immutable once built
// and safe for concurrent use.
type Registry struct {
	hats       []Hat          // config order, coordinator excluded
	index      map[string]int // hat ID → position in hats
	router     *events.Router
	completion string
}

// Option adjusts a Registry built by NewRegistry.
type Option func(*Registry)

// WithCompletionTopic names the topic that claims the whole objective is
// done, so that [Registry.Routes] offers it to the coordinator and to any
// hat without a Publishes list.
func WithCompletionTopic(topic string) Option {
	return func(r *Registry) { r.completion = topic }
}

// HatError is one problem with one configured hat. NewRegistry joins every
// problem it finds (errors.Join), so a user fixes them all in one pass.
type HatError struct {
	Index int    // position of the hat in the configuration, 0-based
	ID    string // empty when the problem is the missing ID
	Err   error  // what is wrong; an *events.TopicError for a bad trigger
}

func (e *HatError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("hats[%d]: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("hat %q: %v", e.ID, e.Err)
}

func (e *HatError) Unwrap() error { return e.Err }

// NewRegistry validates hs and builds the registry. Every hat needs a unique,
// non-empty ID other than [CoordinatorID] and at least one trigger; each
// trigger must be a valid pattern ([events.ValidatePattern]) other than
// [ReservedResumeTopic]. The error joins every problem found, each a
// *HatError, so errors.Is(err, events.ErrInvalidTopic) finds a bad trigger.
func NewRegistry(hs []Hat, opts ...Option) (*Registry, error) {
	if err := validate(hs); err != nil {
		return nil, err
	}
	r := &Registry{hats: make([]Hat, len(hs)), index: make(map[string]int, len(hs))}
	subs := make([]events.Subscription, len(hs))
	for i, h := range hs {
		r.hats[i] = cloneHat(h)
		r.index[h.ID] = i
		subs[i] = events.Subscription{Hat: h.ID, Triggers: slices.Clone(h.Triggers)}
	}
	r.router = events.NewRouter(subs)
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

func validate(hs []Hat) error {
	var errs []error
	seen := make(map[string]bool, len(hs))
	for i, h := range hs {
		for _, err := range append(checkID(h.ID, seen), checkTriggers(h.Triggers)...) {
			errs = append(errs, &HatError{Index: i, ID: h.ID, Err: err})
		}
		seen[h.ID] = true
	}
	return errors.Join(errs...)
}

func checkID(id string, seen map[string]bool) []error {
	switch {
	case strings.TrimSpace(id) == "":
		return []error{errors.New("the hat has no id")}
	case id == CoordinatorID:
		return []error{fmt.Errorf("the id %q is reserved for the built-in coordinator; rename the hat", CoordinatorID)}
	case seen[id]:
		return []error{errors.New("defined more than once; hat ids must be unique")}
	}
	return nil
}

func checkTriggers(triggers []string) []error {
	if len(triggers) == 0 {
		return []error{errors.New("no triggers; list the topics that start this hat under triggers")}
	}
	var errs []error
	for _, t := range triggers {
		if err := events.ValidatePattern(t); err != nil {
			errs = append(errs, err)
		} else if t == ReservedResumeTopic {
			errs = append(errs, fmt.Errorf("trigger %q is reserved: ralph publishes it to hand control back to the coordinator; remove it", t))
		}
	}
	return errs
}

// Hats returns the configured hats in config order, without the coordinator.
func (r *Registry) Hats() []Hat {
	out := make([]Hat, len(r.hats))
	for i, h := range r.hats {
		out[i] = cloneHat(h)
	}
	return out
}

// Get returns the hat with the given ID. The coordinator ([CoordinatorID]) is
// always found.
func (r *Registry) Get(id string) (Hat, bool) {
	if id == CoordinatorID {
		return Coordinator(), true
	}
	i, ok := r.index[id]
	if !ok {
		return Hat{}, false
	}
	return cloneHat(r.hats[i]), true
}

// known reports whether id names a configured hat or the coordinator.
func (r *Registry) known(id string) bool {
	_, ok := r.index[id]
	return ok || id == CoordinatorID
}

// Route returns the IDs of the configured hats that receive ev, in config
// order (see [events.Router] for the rule); empty means the coordinator
// handles it.
//
// Two cases come before the router, because the router knows only configured hats:
// an event targeted at the coordinator goes to the coordinator, and
// [ReservedResumeTopic] goes to the coordinator even past a wildcard trigger
// such as "task.*" or "*", because it exists to hand control back there. A
// Target naming no known hat is ignored and the event is routed by topic;
// the engine rejects an agent's event with such a target before it gets
// here (see [Registry.CheckHatID]), so a typo does not send it to a hat the
// agent did not choose.
func (r *Registry) Route(ev events.Event) []string {
	switch {
	case ev.Target == CoordinatorID:
		return nil
	case r.router.HasHat(ev.Target):
		return []string{ev.Target}
	case ev.Topic == ReservedResumeTopic:
		return nil
	}
	return r.router.Route(ev)
}

// Receivers returns the IDs of the configured hats an untargeted event on
// topic would reach, in config order; empty means the coordinator.
func (r *Registry) Receivers(topic string) []string {
	if topic == ReservedResumeTopic {
		return nil
	}
	return r.router.Receivers(topic)
}

// Routes says, for each topic h may publish, which hats receive it. A hat
// with a Publishes list gets exactly that list. A hat without one, such as
// the coordinator, may publish anything; it is offered every exact
// (wildcard-free) trigger of the other configured hats, in config order, then
// the completion topic if one was given with [WithCompletionTopic], since
// those are the hand-offs that reach someone.
func (r *Registry) Routes(h Hat) []Route {
	topics := h.Publishes
	if len(topics) == 0 {
		topics = r.handOffTopics(h.ID)
	}
	routes := make([]Route, 0, len(topics))
	for _, t := range topics {
		routes = append(routes, Route{Topic: t, Receivers: r.Receivers(t)})
	}
	return routes
}

// handOffTopics lists the exact triggers of every configured hat but self,
// then the completion topic, without repeats.
func (r *Registry) handOffTopics(self string) []string {
	var topics []string
	add := func(t string) {
		if t != "" && !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	for _, h := range r.hats {
		if h.ID == self {
			continue
		}
		for _, t := range h.Triggers {
			if !isPattern(t) {
				add(t)
			}
		}
	}
	add(r.completion)
	return topics
}

// isPattern reports whether a trigger is a wildcard pattern rather than a
// topic one could publish.
func isPattern(trigger string) bool { return strings.Contains(trigger, "*") }

// cloneHat copies the slices so callers cannot change the registry through a
// returned Hat.
func cloneHat(h Hat) Hat {
	h.Triggers = slices.Clone(h.Triggers)
	h.Publishes = slices.Clone(h.Publishes)
	if h.Aggregate != nil {
		a := *h.Aggregate
		h.Aggregate = &a
	}
	return h
}

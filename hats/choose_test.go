package hats

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// seq numbers events so that two events on one topic stay distinguishable.
var seq int

func ev(topic string) events.Event {
	seq++
	return events.Event{
		TS:      t0.Add(time.Duration(seq) * time.Second),
		Topic:   topic,
		Payload: events.StringPayload(fmt.Sprintf("payload %d", seq)),
		Source:  events.SourceAgent,
	}
}

func evTo(topic, target string) events.Event {
	e := ev(topic)
	e.Target = target
	return e
}

func TestChoose(t *testing.T) {
	pipeline := testHats()
	withCatchAll := append(testHats(), Hat{ID: "janitor", Triggers: []string{"*"}})
	withWildcard := append(testHats(),
		Hat{ID: "watcher", Triggers: []string{"build.*", "task.*"}})

	tests := []struct {
		name    string
		hats    []Hat
		pending []events.Event
		wantHat string
		// wantTaken are the indexes in pending of the events the hat takes.
		wantTaken []int
	}{
		{
			name:      "no pending events",
			hats:      pipeline,
			wantHat:   CoordinatorID,
			wantTaken: nil,
		},
		{
			name:      "targeted event jumps the queue",
			hats:      pipeline,
			pending:   []events.Event{ev("task.start"), evTo("review.note", "builder"), ev("plan.ready")},
			wantHat:   "builder",
			wantTaken: []int{1, 2},
		},
		{
			name:      "oldest targeted event wins",
			hats:      pipeline,
			pending:   []events.Event{ev("task.start"), evTo("x", "reviewer"), evTo("y", "builder")},
			wantHat:   "reviewer",
			wantTaken: []int{1},
		},
		{
			name:      "target naming an unknown hat is routed by topic",
			hats:      pipeline,
			pending:   []events.Event{ev("plan.ready"), evTo("build.done", "ghost")},
			wantHat:   "builder",
			wantTaken: []int{0},
		},
		{
			name:      "target at the coordinator",
			hats:      pipeline,
			pending:   []events.Event{ev("plan.ready"), evTo("plan.ready", CoordinatorID), ev("stray")},
			wantHat:   CoordinatorID,
			wantTaken: []int{1, 2},
		},
		{
			name:      "oldest pending event picks its subscriber",
			hats:      pipeline,
			pending:   []events.Event{ev("build.done"), ev("plan.ready")},
			wantHat:   "reviewer",
			wantTaken: []int{0},
		},
		{
			name:      "multiple events to the same hat",
			hats:      pipeline,
			pending:   []events.Event{ev("plan.ready"), ev("build.done"), ev("review.rejected"), ev("plan.ready")},
			wantHat:   "builder",
			wantTaken: []int{0, 2, 3},
		},
		{
			name:      "first receiver in config order",
			hats:      withWildcard,
			pending:   []events.Event{ev("build.done"), ev("build.blocked")},
			wantHat:   "reviewer",
			wantTaken: []int{0},
		},
		{
			name:      "an event two hats trigger on stays with the first in config order",
			hats:      withWildcard,
			pending:   []events.Event{ev("build.blocked"), ev("build.done"), ev("build.failed"), ev("plan.ready")},
			wantHat:   "watcher",
			wantTaken: []int{0, 2},
		},
		{
			name:      "catch-all takes what nobody else does",
			hats:      withCatchAll,
			pending:   []events.Event{ev("misc.note"), ev("build.done"), ev("other.note")},
			wantHat:   "janitor",
			wantTaken: []int{0, 2},
		},
		{
			name:      "catch-all does not take a subscribed event",
			hats:      withCatchAll,
			pending:   []events.Event{ev("build.done"), ev("misc.note")},
			wantHat:   "reviewer",
			wantTaken: []int{0},
		},
		{
			name:      "coordinator fallback takes every unrouted event",
			hats:      pipeline,
			pending:   []events.Event{ev("misc.note"), ev("build.done"), ev("other.note")},
			wantHat:   CoordinatorID,
			wantTaken: []int{0, 2},
		},
		{
			name:      "unrouted event waits behind an older routed one",
			hats:      pipeline,
			pending:   []events.Event{ev("build.done"), ev("misc.note")},
			wantHat:   "reviewer",
			wantTaken: []int{0},
		},
		{
			name:      "resume goes to the coordinator past a wildcard",
			hats:      withWildcard,
			pending:   []events.Event{ev(ReservedResumeTopic)},
			wantHat:   CoordinatorID,
			wantTaken: []int{0},
		},
		{
			name:      "guidance goes to the next hat whatever it is, not behind the coordinator",
			hats:      pipeline,
			pending:   []events.Event{ev(GuidanceTopic), ev("build.done"), ev("misc.note")},
			wantHat:   "reviewer",
			wantTaken: []int{0, 1},
		},
		{
			name:      "guidance alone goes to the coordinator",
			hats:      pipeline,
			pending:   []events.Event{ev(GuidanceTopic), ev(GuidanceTopic)},
			wantHat:   CoordinatorID,
			wantTaken: []int{0, 1},
		},
		{
			name:      "guidance a hat triggers on is that hat's",
			hats:      withCatchAll,
			pending:   []events.Event{ev("build.done"), ev(GuidanceTopic)},
			wantHat:   "reviewer",
			wantTaken: []int{0},
		},
		{
			name:      "targeted guidance goes to its target only",
			hats:      pipeline,
			pending:   []events.Event{ev("build.done"), evTo(GuidanceTopic, "builder")},
			wantHat:   "builder",
			wantTaken: []int{1},
		},
		{
			name:      "starting event with a subscriber",
			hats:      pipeline,
			pending:   []events.Event{ev("task.start")},
			wantHat:   "planner",
			wantTaken: []int{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRegistry(t, tt.hats)
			sel := r.Choose(tt.pending)
			assert.Equal(t, tt.wantHat, sel.Hat.ID)
			assert.Equal(t, pick(tt.pending, tt.wantTaken), sel.Events)
		})
	}
}

func pick(evs []events.Event, idx []int) []events.Event {
	var out []events.Event
	for _, i := range idx {
		out = append(out, evs[i])
	}
	return out
}

// TestChooseDeterministic checks that the choice depends only on the order of
// pending and of the config: not on timestamps, not on the registry instance.
func TestChooseDeterministic(t *testing.T) {
	hs := append(testHats(), Hat{ID: "watcher", Triggers: []string{"build.*"}})
	pending := []events.Event{ev("misc.note"), ev("build.blocked"), ev("build.done"), ev("plan.ready"), ev("misc.other")}
	want := newTestRegistry(t, hs).Choose(pending)
	require.Equal(t, CoordinatorID, want.Hat.ID)

	// Timestamps out of order: the slice order, which is the log order, rules.
	skewed := make([]events.Event, len(pending))
	copy(skewed, pending)
	for i := range skewed {
		skewed[i].TS = t0.Add(-time.Duration(i) * time.Hour)
	}

	for range 50 {
		r := newTestRegistry(t, hs)
		assert.Equal(t, want, r.Choose(pending))
		got := r.Choose(skewed)
		assert.Equal(t, want.Hat.ID, got.Hat.ID)
		assert.Equal(t, []string{"misc.note", "misc.other"}, topics(got.Events))
	}
}

func topics(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Topic)
	}
	return out
}

// TestChooseDrainsInOrder runs Choose and Remaining until nothing is pending:
// every event is handled exactly once.
func TestChooseDrainsInOrder(t *testing.T) {
	r := newTestRegistry(t, testHats())
	pending := []events.Event{ev("build.done"), ev("misc.note"), ev("plan.ready"), evTo("x", "planner"), ev("build.done")}

	var order []string
	handled := 0
	for len(pending) > 0 {
		sel := r.Choose(pending)
		require.NotEmpty(t, sel.Events, "a selection always takes the event that picked it")
		order = append(order, sel.Hat.ID)
		handled += len(sel.Events)
		pending = r.Remaining(pending, sel)
	}
	assert.Equal(t, []string{"planner", "reviewer", CoordinatorID, "builder"}, order)
	assert.Equal(t, 5, handled)
}

func TestRemainingKeepsEventsAppendedAfterChoose(t *testing.T) {
	r := newTestRegistry(t, testHats())
	pending := []events.Event{ev("plan.ready"), ev("build.done")}
	sel := r.Choose(pending)
	require.Equal(t, "builder", sel.Hat.ID)

	later := ev("plan.ready") // published by the builder's own iteration
	got := r.Remaining(append(pending, later), sel)
	assert.Equal(t, []events.Event{pending[1], later}, got)
}

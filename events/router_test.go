package events_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
)

func TestBusRoute(t *testing.T) {
	router := events.NewRouter([]events.Subscription{
		{Hat: "planner", Triggers: []string{"task.start", "build.blocked"}},
		{Hat: "builder", Triggers: []string{"task.*", "review.rejected"}},
		{Hat: "reviewer", Triggers: []string{"*.done"}},
		{Hat: "fallback", Triggers: []string{"*"}},
		{Hat: "observer", Triggers: []string{"*", "metrics.tick"}},
		{Hat: "idle"}, // subscribed, no triggers
	})
	tests := []struct {
		name string
		ev   events.Event
		want []string
	}{
		{"one specific", events.Event{Topic: "build.blocked"}, []string{"planner"}},
		{"several in subscription order", events.Event{Topic: "task.start"}, []string{"planner", "builder"}},
		{"glob", events.Event{Topic: "task.resume"}, []string{"builder"}},
		{"leading glob", events.Event{Topic: "build.done"}, []string{"reviewer"}},
		{"specific beats catch-all", events.Event{Topic: "metrics.tick"}, []string{"observer"}},
		{"catch-all gets the rest, in order", events.Event{Topic: "nobody.wants"}, []string{"fallback", "observer"}},
		{"glob segment count", events.Event{Topic: "task.a.b"}, []string{"fallback", "observer"}},
		{"target", events.Event{Topic: "task.start", Target: "reviewer"}, []string{"reviewer"}},
		{"target without trigger", events.Event{Topic: "x", Target: "idle"}, []string{"idle"}},
		{"unknown target routes untargeted", events.Event{Topic: "build.done", Target: "ghost"}, []string{"reviewer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, router.Route(tt.ev))
		})
	}
}

func TestBusNoCatchAll(t *testing.T) {
	router := events.NewRouter([]events.Subscription{{Hat: "builder", Triggers: []string{"build.*"}}})
	assert.Nil(t, router.Route(events.Event{Topic: "review.done"}))
	assert.Nil(t, router.Receivers("review.done"))
	assert.Equal(t, []string{"builder"}, router.Receivers("build.start"))
}

func TestBusHasHat(t *testing.T) {
	router := events.NewRouter([]events.Subscription{{Hat: "builder", Triggers: []string{"build.*"}}, {Hat: "idle"}})
	assert.True(t, router.HasHat("builder"))
	assert.True(t, router.HasHat("idle"))
	assert.False(t, router.HasHat("ghost"))
	assert.False(t, router.HasHat(""))
}

func TestBusDuplicateHatAppearsOnce(t *testing.T) {
	router := events.NewRouter([]events.Subscription{
		{Hat: "a", Triggers: []string{"x.*"}},
		{Hat: "b", Triggers: []string{"x.y"}},
		{Hat: "a", Triggers: []string{"x.y"}},
	})
	assert.Equal(t, []string{"a", "b"}, router.Receivers("x.y"))
}

func TestBusCopiesSubscriptions(t *testing.T) {
	triggers := []string{"build.done"}
	router := events.NewRouter([]events.Subscription{{Hat: "a", Triggers: triggers}})
	triggers[0] = "other"
	assert.Equal(t, []string{"a"}, router.Receivers("build.done"))
}

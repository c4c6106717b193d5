package hats

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// testHats is a small pipeline: planner → builder → reviewer, with the
// reviewer able to send work back to the builder.
func testHats() []Hat {
	return []Hat{
		{
			ID: "planner", Name: "Planner", Description: "Breaks the objective into steps.",
			Triggers: []string{"task.start"}, Publishes: []string{"plan.ready"},
			Instructions: "Write the plan to PLAN.md, then hand the first step to the builder.",
		},
		{
			ID: "builder", Name: "Builder", Description: "Implements one step at a time.",
			Triggers: []string{"plan.ready", "review.rejected"}, Publishes: []string{"build.done", "build.blocked"},
			Instructions: "Implement the step. Run `go test ./...` before you publish build.done.",
		},
		{
			ID: "reviewer", Name: "Reviewer", Description: "Reviews the builder's change.",
			Triggers: []string{"build.done"}, Publishes: []string{"review.approved", "review.rejected"},
			Instructions: "Review the diff against the plan. Reject with concrete reasons.",
		},
	}
}

func newTestRegistry(t *testing.T, hs []Hat) *Registry {
	t.Helper()
	r, err := NewRegistry(hs, WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	return r
}

func TestNewRegistryErrors(t *testing.T) {
	tests := []struct {
		name string
		hats []Hat
		want string
	}{
		{
			name: "empty id",
			hats: []Hat{{Triggers: []string{"a"}}},
			want: `hats[0]: the hat has no id`,
		},
		{
			name: "coordinator id",
			hats: []Hat{{ID: "ralph", Triggers: []string{"a"}}},
			want: `hat "ralph": the id "ralph" is reserved for the built-in coordinator; rename the hat`,
		},
		{
			name: "duplicate id",
			hats: []Hat{{ID: "b", Triggers: []string{"a"}}, {ID: "b", Triggers: []string{"c"}}},
			want: `hat "b": defined more than once; hat ids must be unique`,
		},
		{
			name: "no triggers",
			hats: []Hat{{ID: "b"}},
			want: `hat "b": no triggers; list the topics that start this hat under triggers`,
		},
		{
			name: "empty trigger",
			hats: []Hat{{ID: "b", Triggers: []string{"a", " "}}},
			want: `hat "b": invalid topic pattern " ": it is empty (use a name such as "build.done")`,
		},
		{
			name: "glob inside a segment",
			hats: []Hat{{ID: "b", Triggers: []string{"build*"}}},
			want: `hat "b": invalid topic pattern "build*": uses '*' inside the segment "build*" ('*' stands for one whole segment: write "build.*", not "build*")`,
		},
		{
			name: "resume trigger",
			hats: []Hat{{ID: "b", Triggers: []string{"task.resume"}}},
			want: `hat "b": trigger "task.resume" is reserved: ralph publishes it to hand control back to the coordinator; remove it`,
		},
		{
			name: "every problem reported",
			hats: []Hat{{ID: "ralph"}, {ID: "x", Triggers: []string{"task.resume"}}},
			want: `hat "ralph": the id "ralph" is reserved for the built-in coordinator; rename the hat` + "\n" +
				`hat "ralph": no triggers; list the topics that start this hat under triggers` + "\n" +
				`hat "x": trigger "task.resume" is reserved: ralph publishes it to hand control back to the coordinator; remove it`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRegistry(tt.hats)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.Equal(t, tt.want, err.Error())
			var he *HatError
			assert.ErrorAs(t, err, &he)
		})
	}
}

func TestNewRegistryBadTriggerIsTopicError(t *testing.T) {
	_, err := NewRegistry([]Hat{{ID: "b", Triggers: []string{"build done"}}})
	require.ErrorIs(t, err, events.ErrInvalidTopic)
	var te *events.TopicError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "build done", te.Topic)
}

func TestNewRegistryAcceptsNoHats(t *testing.T) {
	r := newTestRegistry(t, nil)
	assert.Empty(t, r.Hats())
	assert.Equal(t, CoordinatorID, r.Choose([]events.Event{ev("task.start")}).Hat.ID)
}

func TestRegistryHatsAndGet(t *testing.T) {
	r := newTestRegistry(t, testHats())

	var ids []string
	for _, h := range r.Hats() {
		ids = append(ids, h.ID)
	}
	assert.Equal(t, []string{"planner", "builder", "reviewer"}, ids, "config order")

	b, ok := r.Get("builder")
	require.True(t, ok)
	assert.Equal(t, "Builder", b.Name)

	c, ok := r.Get(CoordinatorID)
	require.True(t, ok, "the coordinator is always gettable")
	assert.Equal(t, "Ralph (coordinator)", c.Name)
	assert.NotEmpty(t, c.Instructions)

	_, ok = r.Get("ghost")
	assert.False(t, ok)
}

func TestRegistryIsNotChangedThroughReturnedHats(t *testing.T) {
	hs := testHats()
	r := newTestRegistry(t, hs)
	hs[1].Triggers[0] = "changed.by.caller"
	got, _ := r.Get("builder")
	got.Triggers[0] = "changed.by.getter"
	r.Hats()[1].Triggers[0] = "changed.by.hats"

	assert.Equal(t, []string{"builder"}, r.Receivers("plan.ready"))
	got, _ = r.Get("builder")
	assert.Equal(t, "plan.ready", got.Triggers[0])
}

func TestRegistryRoute(t *testing.T) {
	hs := append(testHats(),
		Hat{ID: "watcher", Triggers: []string{"build.*", "task.*"}},
		Hat{ID: "janitor", Triggers: []string{"*"}},
	)
	r := newTestRegistry(t, hs)
	tests := []struct {
		name string
		ev   events.Event
		want []string
	}{
		{"exact trigger", ev("plan.ready"), []string{"builder"}},
		{"exact and wildcard, config order", ev("build.done"), []string{"reviewer", "watcher"}},
		{"wildcard only", ev("build.blocked"), []string{"watcher"}},
		{"catch-all only takes the rest", ev("misc.note"), []string{"janitor"}},
		{"target wins over topic", evTo("build.done", "builder"), []string{"builder"}},
		{"target at coordinator", evTo("build.done", CoordinatorID), nil},
		{"unknown target routes by topic", evTo("build.done", "ghost"), []string{"reviewer", "watcher"}},
		{"resume always goes to the coordinator", ev(ReservedResumeTopic), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, r.Route(tt.ev))
		})
	}
}

func TestRegistryReceivers(t *testing.T) {
	r := newTestRegistry(t, testHats())
	assert.Equal(t, []string{"reviewer"}, r.Receivers("build.done"))
	assert.Nil(t, r.Receivers("nobody.listens"))
	assert.Nil(t, r.Receivers(ReservedResumeTopic))
}

func TestRegistryRoutes(t *testing.T) {
	hs := append(testHats(),
		Hat{ID: "watcher", Triggers: []string{"build.*", "lint.requested"}},
	)
	r := newTestRegistry(t, hs)

	t.Run("publishes list", func(t *testing.T) {
		b, _ := r.Get("builder")
		assert.Equal(t, []Route{
			{Topic: "build.done", Receivers: []string{"reviewer", "watcher"}},
			{Topic: "build.blocked", Receivers: []string{"watcher"}},
		}, r.Routes(b))
	})

	t.Run("coordinator gets exact triggers and completion", func(t *testing.T) {
		assert.Equal(t, []Route{
			{Topic: "task.start", Receivers: []string{"planner"}},
			{Topic: "plan.ready", Receivers: []string{"builder"}},
			{Topic: "review.rejected", Receivers: []string{"builder"}},
			{Topic: "build.done", Receivers: []string{"reviewer", "watcher"}},
			{Topic: "lint.requested", Receivers: []string{"watcher"}},
			{Topic: "LOOP_COMPLETE"},
		}, r.Routes(Coordinator()))
	})

	t.Run("no publishes list leaves out own triggers", func(t *testing.T) {
		w, _ := r.Get("watcher")
		var topics []string
		for _, rt := range r.Routes(w) {
			topics = append(topics, rt.Topic)
		}
		assert.Equal(t, []string{"task.start", "plan.ready", "review.rejected", "build.done", "LOOP_COMPLETE"}, topics)
	})

	t.Run("no completion topic configured", func(t *testing.T) {
		r, err := NewRegistry(testHats())
		require.NoError(t, err)
		routes := r.Routes(Coordinator())
		assert.Equal(t, "build.done", routes[len(routes)-1].Topic)
	})
}

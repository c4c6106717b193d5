package hats

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hat is a terse hat for topology tests.
func hat(id string, triggers, publishes []string) Hat {
	return Hat{ID: id, Name: id, Triggers: triggers, Publishes: publishes}
}

func l(s ...string) []string { return s }

func topology() Topology {
	return Topology{StartingEvent: "task.start", CompletionTopic: "LOOP_COMPLETE"}
}

func mustRegistry(t *testing.T, hs ...Hat) *Registry {
	t.Helper()
	r, err := NewRegistry(hs, WithCompletionTopic("LOOP_COMPLETE"))
	require.NoError(t, err)
	return r
}

// summary is a finding as "severity rule hat topic: message".
func summary(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, string(f.Severity)+" "+f.Rule+" "+f.Hat+" "+f.Topic+": "+f.Message)
	}
	return out
}

func TestCheck(t *testing.T) {
	// A sound pipeline, to which each case adds one mistake.
	planner := hat("planner", l("task.start", "build.done"), l("build.task", "LOOP_COMPLETE"))
	builder := hat("builder", l("build.task"), l("build.done"))
	tests := []struct {
		name string
		hats []Hat
		topo func(*Topology)
		want []string
	}{
		{
			name: "sound",
			hats: []Hat{planner, builder},
			want: []string{},
		},
		{
			name: "a hat nothing publishes to",
			hats: []Hat{planner, builder, hat("reviewer", l("review.request"), l("build.done"))},
			want: []string{`error unreachable-hat reviewer review.request: hat "reviewer" is unreachable: nothing reachable from the starting event "task.start" publishes a topic matching its triggers (review.request)`},
		},
		{
			name: "a hat whose topic an earlier hat takes",
			hats: []Hat{
				hat("planner", l("task.start"), l("build.done")),
				hat("any", l("build.*"), l("LOOP_COMPLETE")),
				hat("builder", l("build.done"), l("LOOP_COMPLETE")),
			},
			want: []string{
				`error unreachable-hat builder build.done: hat "builder" is unreachable: "build.done", which its triggers match, goes to hat "any", the first in config order`,
				`warning ambiguous-triggers builder build.done: hats "any" (build.*) and "builder" (build.done) both trigger on "build.done": ralph routes it to "any", the first in config order, and "builder" never gets it`,
			},
		},
		{
			name: "a hat triggered by the completion topic",
			hats: []Hat{planner, builder, hat("after", l("LOOP_COMPLETE"), l("build.task"))},
			want: []string{`error unreachable-hat after LOOP_COMPLETE: hat "after" is unreachable: its trigger matches "LOOP_COMPLETE", the completion topic, which ends the run instead of going to a hat`},
		},
		{
			name: "no hat publishes the completion topic",
			hats: []Hat{hat("planner", l("task.start", "build.done"), l("build.task")), builder},
			want: []string{`error no-completion-path  LOOP_COMPLETE: no path from the starting event "task.start" to the completion topic "LOOP_COMPLETE": it reaches planner, builder, and none of them publishes "LOOP_COMPLETE"`},
		},
		{
			name: "only an unreachable hat publishes the completion topic",
			hats: []Hat{
				hat("planner", l("task.start"), l("build.task")),
				hat("builder", l("build.task"), l("build.task")),
				hat("finisher", l("finish"), l("LOOP_COMPLETE")),
			},
			want: []string{
				`error unreachable-hat finisher finish: hat "finisher" is unreachable: nothing reachable from the starting event "task.start" publishes a topic matching its triggers (finish)`,
				`error no-completion-path  LOOP_COMPLETE: no path from the starting event "task.start" to the completion topic "LOOP_COMPLETE": it reaches planner, builder, and none of them publishes "LOOP_COMPLETE"`,
			},
		},
		{
			name: "a published topic nobody triggers on",
			hats: []Hat{planner, hat("builder", l("build.task"), l("build.done", "build.log"))},
			want: []string{`warning unhandled-topic builder build.log: hat "builder" publishes "build.log", but no hat triggers on it: the coordinator would take it`},
		},
		{
			name: "a default_publishes topic nobody triggers on",
			hats: []Hat{planner, {ID: "builder", Triggers: l("build.task"), Publishes: l("build.done"), DefaultPublishes: "build.finished"}},
			want: []string{`warning unhandled-topic builder build.finished: hat "builder" publishes "build.finished", but no hat triggers on it: the coordinator would take it`},
		},
		{
			name: "overlapping patterns",
			hats: []Hat{
				hat("planner", l("task.start", "*.done"), l("build.task", "LOOP_COMPLETE")),
				hat("builder", l("build.task", "build.*"), l("build.done")),
			},
			want: []string{`warning ambiguous-triggers builder build.done: hats "planner" (*.done) and "builder" (build.*) both trigger on "build.done": ralph routes it to "planner", the first in config order, and "builder" never gets it`},
		},
		{
			name: "a catch-all yields to specific triggers",
			hats: []Hat{planner, builder, hat("rest", l("*"), l("LOOP_COMPLETE"))},
			want: []string{`error unreachable-hat rest task.start: hat "rest" is unreachable: "task.start", which its triggers match, goes to hat "planner", the first in config order`},
		},
		{
			name: "a required event nobody publishes",
			hats: []Hat{planner, builder},
			topo: func(t *Topology) { t.RequiredEvents = l("build.done", "review.approved") },
			want: []string{`error required-event-unpublished  review.approved: required event "review.approved" is published by no hat, so a completion claim would never be accepted`},
		},
		{
			name: "a gate naming an unknown criterion",
			hats: []Hat{planner, builder},
			topo: func(t *Topology) {
				t.Criteria = l("tests_pass", "file_exists")
				t.Gates = []Gate{{Topic: "build.done", Criteria: l("tests_pass", "test_pass"), Where: "ralph.yml:9"},
					{Topic: "build.done", Hat: "builder", Criteria: l("lint")}}
			},
			want: []string{
				`error unknown-criterion  build.done: gate on "build.done" names unknown criterion "test_pass"`,
				`error unknown-criterion builder build.done: hat "builder": gate on "build.done" names unknown criterion "lint"`,
			},
		},
		{
			name: "a gate on a topic nobody publishes",
			hats: []Hat{planner, builder},
			topo: func(t *Topology) {
				t.Gates = []Gate{{Topic: "build.don", Criteria: l("tests_pass")},
					{Topic: "build.*", Hat: "planner", Criteria: l("tests_pass")},
					{Topic: "build.*", Hat: "builder", Criteria: l("tests_pass")},
					{Topic: "LOOP_COMPLETE", Criteria: l("tests_pass")}}
			},
			want: []string{`warning gate-never-applies  build.don: gate on "build.don" never applies: no hat publishes a topic matching it`},
		},
		{
			name: "the coordinator takes the starting event and hands off to every exact trigger",
			hats: []Hat{hat("writer", l("write.task"), l("write.done")), hat("reviewer", l("write.done"), l("review.approved"))},
			topo: func(t *Topology) { t.RequiredEvents = l("review.approved") },
			want: []string{`warning unhandled-topic reviewer review.approved: hat "reviewer" publishes "review.approved", but no hat triggers on it: the coordinator would take it`},
		},
		{
			name: "a wildcard-only hat the coordinator cannot name",
			hats: []Hat{hat("writer", l("write.task"), l("LOOP_COMPLETE")), hat("fixer", l("fix.*"), l("LOOP_COMPLETE"))},
			want: []string{`error unreachable-hat fixer fix.*: hat "fixer" is unreachable: nothing reachable from the starting event "task.start" publishes a topic matching its triggers (fix.*)`},
		},
		{
			name: "a hat without publishes may hand off anything",
			hats: []Hat{hat("planner", l("task.start"), nil), hat("builder", l("build.task"), l("build.task"))},
			want: []string{},
		},
		{
			name: "default_publishes is the completion topic",
			hats: []Hat{planner, func() Hat { b := builder; b.DefaultPublishes = "LOOP_COMPLETE"; return b }()},
			want: []string{`warning default-publishes-completion builder LOOP_COMPLETE: hat "builder" has default_publishes: LOOP_COMPLETE, the completion topic, which ralph never publishes on an agent's behalf: when its agent publishes nothing, the coordinator is asked to check the objective instead`},
		},
		{
			name: "a default completion topic is no path to completion",
			hats: []Hat{hat("planner", l("task.start", "build.done"), l("build.task")),
				func() Hat { b := builder; b.DefaultPublishes = "LOOP_COMPLETE"; return b }()},
			want: []string{
				`error no-completion-path  LOOP_COMPLETE: no path from the starting event "task.start" to the completion topic "LOOP_COMPLETE": it reaches planner, builder, and none of them publishes "LOOP_COMPLETE"`,
				`warning default-publishes-completion builder LOOP_COMPLETE: hat "builder" has default_publishes: LOOP_COMPLETE, the completion topic, which ralph never publishes on an agent's behalf: when its agent publishes nothing, the coordinator is asked to check the objective instead`,
			},
		},
		{
			name: "the cancellation topic is not unhandled",
			hats: []Hat{hat("planner", l("task.start"), l("LOOP_COMPLETE", "LOOP_CANCEL"))},
			topo: func(t *Topology) { t.CancellationTopic = "LOOP_CANCEL" },
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topo := topology()
			if tt.topo != nil {
				tt.topo(&topo)
			}
			got := Check(mustRegistry(t, tt.hats...), topo)
			assert.Equal(t, tt.want, summary(got))
		})
	}
}

func TestCheckFindingDetails(t *testing.T) {
	r := mustRegistry(t, hat("planner", l("task.start"), l("LOOP_COMPLETE")))
	topo := topology()
	topo.Criteria = l("tests_pass")
	topo.Gates = []Gate{{Topic: "LOOP_COMPLETE", Criteria: l("test_pass"), Where: "ralph.yml:12"}}

	got := Check(r, topo)

	require.Len(t, got, 1)
	assert.Equal(t, "ralph.yml:12", got[0].Where)
	assert.Equal(t, "use one of: tests_pass", got[0].Hint)
	assert.True(t, HasErrors(got))
	assert.False(t, HasErrors(nil))
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		p, q string
		want string
		ok   bool
	}{
		{"build.done", "build.done", "build.done", true},
		{"build.*", "build.done", "build.done", true},
		{"build.done", "*.done", "build.done", true},
		{"build.*", "*.done", "build.done", true},
		{"build.*", "build.*", "build.*", true},
		{"build.*", "review.*", "", false},
		{"build.*", "build.done.x", "", false},
		{"*", "build.done", "build.done", true},
		{"*", "*", "*", true},
	}
	for _, tt := range tests {
		t.Run(tt.p+"/"+tt.q, func(t *testing.T) {
			got, ok := overlap(tt.p, tt.q)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
			got, ok = overlap(tt.q, tt.p)
			assert.Equal(t, tt.ok, ok, "symmetric")
			assert.Equal(t, tt.want, got, "symmetric")
		})
	}
}

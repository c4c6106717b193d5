package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// rejections returns the event.rejected records of a log, in order.
func rejections(t *testing.T, recs []events.Record) []runfiles.RejectedRecord {
	t.Helper()
	var out []runfiles.RejectedRecord
	for _, r := range recs {
		if r.Err == nil && r.Event.Topic == runfiles.TopicEventRejected {
			var rej runfiles.RejectedRecord
			require.NoError(t, json.Unmarshal(r.Event.Payload, &rej))
			out = append(out, rej)
		}
	}
	return out
}

// badTagTopics are topics an agent may well write in a tag, each failing
// ValidateTopic for a different reason.
var badTagTopics = []string{"bad topic", "a..b", "build.*", "über.done", "a[1]"}

// A tag whose topic ralph cannot route is the agent's mistake, not ralph's:
// it is recorded, rejected as invalid_topic and counted as malformed, the
// next prompt says why, and the run goes on.
func TestTagWithInvalidTopicIsRejected(t *testing.T) {
	for _, topic := range badTagTopics {
		t.Run(topic, func(t *testing.T) {
			b := &fakeBackend{turns: []turn{
				{text: "Done. " + tagged(topic, "p")},
				{text: tagged("LOOP_COMPLETE", "done")},
			}}
			dir := t.TempDir()
			out, err := newTestEngine(t, dir, b, settings()).Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
			assert.Equal(t, 1, out.Malformed, "the bad tag counts as a malformed event")

			rej := rejections(t, readLog(t, dir))
			require.Len(t, rej, 1)
			assert.Equal(t, topic, rej[0].Topic)
			assert.Equal(t, runfiles.RejectInvalidTopic, rej[0].Reason)
			require.Len(t, b.prompts, 2)
			assert.Contains(t, b.prompts[1], "invalid_topic")
			assert.Contains(t, b.prompts[1], rej[0].Detail, "the next prompt says what was wrong")
		})
	}
}

// A tag with a bad topic next to a good one: the good one is not lost with
// it.
func TestTagWithInvalidTopicKeepsItsNeighbours(t *testing.T) {
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("bad topic", "x") + "\n" + tagged("build.task", "go")}, {text: tagged("LOOP_COMPLETE", "ok")}},
		"builder": {{emit: []events.Event{ev("build.done", "built")}}},
	}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, settings()).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "reviewer", "ralph"}, b.hats)
}

func targeted(topic, target, payload string) string {
	return `<event topic="` + topic + `" target="` + target + `">` + payload + `</event>`
}

// A target that names no hat is a mistake (a typo, the wrong case): the
// event is rejected as unknown_target with the nearest hat named, rather
// than routed by its topic to a hat the agent did not mean.
func TestUnknownTargetIsRejected(t *testing.T) {
	cases := []struct {
		name, target, wantDetail string
		emit                     bool
	}{
		{name: "tag, wrong case", target: "Builder", wantDetail: `no hat "Builder"; did you mean "builder"?`},
		{name: "tag, no such hat", target: "deployer", wantDetail: `no hat "deployer"`},
		{name: "emit, typo", target: "buidler", wantDetail: `no hat "buidler"; did you mean "builder"?`, emit: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := turn{text: targeted("build.task", tc.target, "go")}
			if tc.emit {
				e := ev("build.task", "go")
				e.Target = tc.target
				first = turn{emit: []events.Event{e}}
			}
			b := &fakeBackend{byHat: map[string][]turn{"ralph": {first, {text: tagged("LOOP_COMPLETE", "done")}}}}
			dir := t.TempDir()
			out, err := newTestEngine(t, dir, b, settings()).Run(t.Context())
			require.NoError(t, err)
			assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
			assert.Equal(t, []string{"ralph", "ralph"}, b.hats, "build.task did not reach the builder by its topic")

			rej := rejections(t, readLog(t, dir))
			require.Len(t, rej, 1)
			assert.Equal(t, runfiles.RejectUnknownTarget, rej[0].Reason)
			assert.Contains(t, rej[0].Detail, tc.wantDetail)
			assert.Contains(t, rej[0].Detail, "the hats are: ralph, builder, reviewer")
			assert.Contains(t, b.prompts[1], `Your event "build.task" was rejected (unknown_target): `+rej[0].Detail)
		})
	}
}

// The coordinator is a hat an event may target, though it is not
// configured.
func TestTargetingTheCoordinatorIsAccepted(t *testing.T) {
	b := &fakeBackend{byHat: map[string][]turn{
		"ralph":   {{text: tagged("build.task", "go")}, {text: tagged("LOOP_COMPLETE", "done")}},
		"builder": {{text: targeted("build.done", "ralph", "built")}},
	}}
	dir := t.TempDir()
	out, err := newTestEngine(t, dir, b, settings()).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, runfiles.ReasonCompleted, out.Reason)
	assert.Equal(t, []string{"ralph", "builder", "ralph"}, b.hats, "build.done went to ralph, not to the reviewer")
	assert.Empty(t, rejections(t, readLog(t, dir)))
}

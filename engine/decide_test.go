package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestDecide is the decision rule as a table: an agent's event in, routed
// (to whom, as what) or rejected (why) out. The run has a builder and a
// reviewer, hat scope enforced, a cancellation topic, and a gate on
// review.approved that fails while approved.ok is missing.
func TestDecide(t *testing.T) {
	s := settings()
	s.EnforceHatScope = true
	s.CancellationTopic = "LOOP_CANCEL"
	s.Gates = []Gate{{Topic: "review.approved", Criteria: []criteria.Spec{{Type: "file_exists", Path: "approved.ok"}}}}
	e := newTestEngine(t, t.TempDir(), &fakeBackend{}, s, withVerifier)
	e.st = runfiles.NewRunState()

	tests := []struct {
		name        string
		ev          events.Event
		wantTo      []string              // routed to these hats
		wantAs      runfiles.Disposition  // routed as
		wantRejects runfiles.RejectReason // or rejected for this reason
	}{
		{name: "a hat's trigger", ev: agentEvent("builder", "build.done", ""), wantTo: []string{"reviewer"}},
		{name: "no hat's trigger goes to the coordinator", ev: agentEvent("", "notes.taken", ""), wantTo: []string{}},
		{name: "a target", ev: agentEvent("", "build.task", "reviewer"), wantTo: []string{"reviewer"}},
		{name: "the completion topic", ev: agentEvent("reviewer", "LOOP_COMPLETE", ""), wantTo: []string{}, wantAs: runfiles.AsCompletion},
		{name: "the cancellation topic", ev: agentEvent("", "LOOP_CANCEL", ""), wantTo: []string{}, wantAs: runfiles.AsCancellation},
		{name: "an invalid topic", ev: agentEvent("", "build done", ""), wantRejects: runfiles.RejectInvalidTopic},
		{name: "a topic of ralph's", ev: agentEvent("", "loop.terminate", ""), wantRejects: runfiles.RejectReserved},
		{name: "task.resume is ralph's", ev: agentEvent("", runfiles.TopicTaskResume, ""), wantRejects: runfiles.RejectReserved},
		{name: "an unknown target", ev: agentEvent("", "build.task", "Builder"), wantRejects: runfiles.RejectUnknownTarget},
		{name: "outside the hat's publishes", ev: agentEvent("builder", "review.approved", ""), wantRejects: runfiles.RejectScope},
		{name: "a failing gate", ev: agentEvent("reviewer", "review.approved", ""), wantRejects: runfiles.RejectGateFailed},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &batch{}
			e.decide(t.Context(), b, runfiles.UndecidedEvent{Offset: int64(100 * (i + 1)), Event: tt.ev})
			require.NotEmpty(t, b.lines)
			decision := b.lines[0]
			if tt.wantRejects != "" {
				require.Equal(t, runfiles.TopicEventRejected, decision.Topic)
				var r runfiles.RejectedRecord
				require.NoError(t, json.Unmarshal(decision.Payload, &r))
				assert.Equal(t, tt.wantRejects, r.Reason, r.Detail)
				assert.Empty(t, b.accepted)
				return
			}
			require.Equal(t, runfiles.TopicEventRouted, decision.Topic, "%s", decision.Payload)
			var r runfiles.RoutedRecord
			require.NoError(t, json.Unmarshal(decision.Payload, &r))
			assert.Equal(t, tt.wantTo, r.To)
			assert.Equal(t, tt.wantAs, r.As)
			assert.Equal(t, []events.Event{tt.ev}, b.accepted)
		})
	}
}

func agentEvent(hat, topic, target string) events.Event {
	return events.Event{Topic: topic, Hat: hat, Target: target, Source: events.SourceAgent, Payload: events.StringPayload("p")}
}

package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// badTagTopics are topics an agent may well write in a tag, each invalid
// for a different reason.
var badTagTopics = []string{"bad topic", "a..b", "build.*", "über.done", "a[1]"}

// badTagScript: the first iteration publishes a tag with topic, every later
// one claims completion. Steps go by iteration number, so an iteration run
// again after a crash publishes the same tag again.
func badTagScript(topic string) agentScript {
	return agentScript{Steps: []step{
		say("Done. " + tag(topic, "p")),
		say(tag("LOOP_COMPLETE", "done {{run}}")),
	}}
}

// rejectionsOf returns the reason of each event.rejected about topic.
func (w *workspace) rejectionsOf(topic string) []string {
	w.t.Helper()
	var reasons []string
	for _, r := range w.events() {
		if r.Err != nil || r.Event.Topic != "event.rejected" {
			continue
		}
		var rej struct{ Topic, Reason string }
		require.NoError(w.t, json.Unmarshal(r.Event.Payload, &rej))
		if rej.Topic == topic {
			reasons = append(reasons, rej.Reason)
		}
	}
	return reasons
}

// A tag whose topic cannot be routed is rejected like any bad event: the
// run goes on, the log records the rejection, and the next prompt says why.
func TestE2ETagWithInvalidTopicIsRejected(t *testing.T) {
	t.Parallel()
	for _, topic := range badTagTopics {
		t.Run(topic, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", twoHatConfig+agentCLI())
			w.script(badTagScript(topic))

			r := w.ralph("loop")

			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, []string{"invalid_topic"}, w.rejectionsOf(topic))
			assert.Contains(t, w.prompt(2), fmt.Sprintf("Your event %q was rejected (invalid_topic)", topic))
			assert.Contains(t, r.stderr, "malformed lines 1", "the summary counts it as malformed")
			assert.Equal(t, "terminate completed", last(w.flow()))
		})
	}
}

// ralph killed just before and just after it writes the bad tag's event
// (the write that used to end the run as fatal): --resume finishes the run
// and the tag is rejected once.
func TestE2ETagWithInvalidTopicResumesAfterACrash(t *testing.T) {
	t.Parallel()
	// The third write of a run is the first iteration's tags with its
	// iteration.finished, after loop.started and iteration.started.
	for _, point := range []string{"append.before:3", "append.after:3"} {
		t.Run(point, func(t *testing.T) {
			w := newWorkspace(t)
			w.write("ralph.yml", twoHatConfig+agentCLI())
			w.script(badTagScript("bad topic"))

			killed := w.ralphKilledAt(point, false)
			require.True(t, killed.killed, "ralph exited %d before the kill point:\n%s", killed.code, killed.stderr)
			if point == "append.after:3" {
				assert.Equal(t, "tag bad topic", w.flow()[1], "the tag's event was written before the kill")
			}

			r := w.ralph("loop", "--resume")

			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, []string{"invalid_topic"}, w.rejectionsOf("bad topic"))
			w.assertRunIntact()
		})
	}
}

// The tag's event in the log is the agent's, with its topic as written.
func TestE2ETagWithInvalidTopicIsInTheLog(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(badTagScript("über.done"))
	require.Equal(t, 0, w.ralph("loop").code)

	var found []events.Event
	for _, r := range w.events() {
		if r.Err == nil && r.Event.Source == events.SourceTag && r.Event.Topic == "über.done" {
			found = append(found, r.Event)
		}
	}
	require.Len(t, found, 1)
	assert.Equal(t, "p", found[0].PayloadText())
	assert.Equal(t, 1, found[0].Iteration)
}

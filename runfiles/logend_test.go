package runfiles

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestRunEnded(t *testing.T) {
	started := events.Event{Topic: TopicLoopStarted, Source: events.SourceRalph, Payload: json.RawMessage(`{"run_id":"r"}`)}
	resumed := events.Event{Topic: TopicLoopResumed, Source: events.SourceRalph, Payload: json.RawMessage(`{}`)}
	ended := func(r Reason) events.Event {
		return events.Event{Topic: TopicLoopTerminate, Source: events.SourceRalph, Payload: json.RawMessage(`{"reason":"` + string(r) + `"}`)}
	}
	agent := events.Event{Topic: "build.done", Source: events.SourceAgent, Payload: events.StringPayload("ok")}
	fake := events.Event{Topic: TopicLoopTerminate, Source: events.SourceAgent, Payload: json.RawMessage(`{"reason":"completed"}`)}
	big := events.Event{Topic: "build.log", Source: events.SourceAgent, Payload: events.StringPayload(strings.Repeat("x", 200<<10))}
	tests := []struct {
		name  string
		lines []events.Event
		want  Reason
	}{
		{"running", []events.Event{started, agent}, ""},
		{"completed", []events.Event{started, agent, ended(ReasonCompleted)}, ReasonCompleted},
		{"lines after the end", []events.Event{started, ended(ReasonMaxIterations), agent}, ReasonMaxIterations},
		{"resumed", []events.Event{started, ended(ReasonMaxIterations), resumed, agent}, ""},
		{"an agent's terminate is not ralph's", []events.Event{started, fake}, ""},
		{"the end past a MiB of lines", []events.Event{started, ended(ReasonCancelled), big, big, big, big, big, big}, ""},
		{"the end within the last MiB", []events.Event{started, big, big, big, big, big, big, ended(ReasonCancelled), agent}, ReasonCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			for _, l := range tt.lines {
				require.NoError(t, events.AppendTo(path, l))
			}
			got, isEnded, err := RunEnded(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want != "", isEnded)
		})
	}
	_, isEnded, err := RunEnded(filepath.Join(t.TempDir(), "none.jsonl"))
	require.NoError(t, err)
	assert.False(t, isEnded, "no log, no ended run")
}

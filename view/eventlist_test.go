package view

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// TestEventListing lists a short log through a filter and --last, and
// counts the malformed line --json leaves out (with --last, only when it is
// among the lines read back from the end).
func TestEventListing(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	lines := []events.Event{
		{TS: start, Topic: "loop.started", Source: events.SourceRalph, Payload: json.RawMessage(`{"run_id":"r"}`)},
		{TS: start.Add(time.Minute), Topic: "build.task", Source: events.SourceTag, Iteration: 1, Hat: "ralph", Payload: events.StringPayload("a")},
		{TS: start.Add(2 * time.Minute), Topic: "build.done", Source: events.SourceAgent, Iteration: 2, Hat: "builder", Payload: events.StringPayload("b")},
		{TS: start.Add(3 * time.Minute), Topic: "build.done", Source: events.SourceAgent, Iteration: 3, Hat: "builder", Payload: events.StringPayload("c")},
		{TS: start.Add(4 * time.Minute), Topic: "loop.terminate", Source: events.SourceRalph, Payload: json.RawMessage(`{"reason":"completed"}`)},
	}
	var b strings.Builder
	for i, ev := range lines {
		line, err := events.EncodeLine(ev)
		require.NoError(t, err)
		b.Write(line)
		if i == 2 {
			b.WriteString("{not json\n")
		}
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))

	list := func(f EventFilter, last int, follow bool) ([]string, int) {
		var out bytes.Buffer
		p := &EventPrinter{W: &out, JSON: true, Loc: time.UTC}
		l := EventListing{Printer: p, Filter: f, Last: last, Follow: follow, Flush: func() error { return nil }}
		require.NoError(t, l.List(context.Background(), path))
		var topics []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			ev, err := events.ParseLine([]byte(line))
			require.NoError(t, err)
			topics = append(topics, ev.Topic)
		}
		return topics, p.Malformed
	}
	topics, malformed := list(EventFilter{}, 0, false)
	assert.Equal(t, []string{"loop.started", "build.task", "build.done", "build.done", "loop.terminate"}, topics)
	assert.Equal(t, 1, malformed)
	// --last reads from the end and counts the malformed lines among the
	// lines it read: none after the last two events, one after the last
	// three.
	topics, malformed = list(EventFilter{}, 2, false)
	assert.Equal(t, []string{"build.done", "loop.terminate"}, topics)
	assert.Equal(t, 0, malformed)
	topics, malformed = list(EventFilter{}, 3, false)
	assert.Equal(t, []string{"build.done", "build.done", "loop.terminate"}, topics)
	assert.Equal(t, 1, malformed)
	topics, _ = list(EventFilter{Topic: "build.*", Hat: "builder"}, 1, false)
	assert.Equal(t, []string{"build.done"}, topics)
	topics, _ = list(EventFilter{Iteration: 1}, 0, false)
	assert.Equal(t, []string{"build.task"}, topics)
	topics, _ = list(EventFilter{Since: start.Add(150 * time.Second)}, 0, false)
	assert.Equal(t, []string{"build.done", "loop.terminate"}, topics)
	// Following a run that has ended returns at once.
	topics, _ = list(EventFilter{Topic: "loop.*"}, 0, true)
	assert.Equal(t, []string{"loop.started", "loop.terminate"}, topics)
}

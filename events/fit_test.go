package events_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// An event whose line would be longer than readers read is written with
// its payload cut to its two ends and a note of what was left out, whatever
// the payload: a text, a text that JSON escapes to six times its length, a
// JSON object. The line reads back as the event.
func TestAppendCutsAPayloadTooLongForALine(t *testing.T) {
	for name, payload := range map[string]json.RawMessage{
		"text":    events.StringPayload("BEGIN" + strings.Repeat("0123456789", 500_000) + "END"),
		"escaped": events.StringPayload("BEGIN" + strings.Repeat("\x01", 1<<20) + "END"),
		"object":  events.ObjectPayload(map[string]string{"log": "BEGIN" + strings.Repeat("x", 3<<20) + "END"}),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			ev := events.Event{TS: time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC), Topic: "build.log", Payload: payload}
			fitted, cut, err := events.FitPayload(ev)
			require.NoError(t, err)
			assert.Positive(t, cut)
			log, err := events.OpenLog(path)
			require.NoError(t, err)
			require.NoError(t, log.Append(ev))
			require.NoError(t, log.Close())

			recs, err := events.NewReader(path, 0).Read()
			require.NoError(t, err)
			require.Len(t, recs, 1)
			require.NoError(t, recs[0].Err)
			assert.LessOrEqual(t, len(recs[0].Line)+1, events.MaxLineBytes)
			assert.Greater(t, len(recs[0].Line)+1, events.MaxLineBytes/2, "the cut keeps what fits")
			text := recs[0].Event.PayloadText()
			assert.Equal(t, fitted.PayloadText(), text, "FitPayload says what Append writes")
			assert.Contains(t, text, "BEGIN")
			assert.Contains(t, text, "END")
			assert.Contains(t, text, "bytes cut by ralph: an event line holds at most 1048576 bytes")
		})
	}
}

// An event that fits is written as it is.
func TestFitPayloadLeavesAnEventThatFits(t *testing.T) {
	ev := events.Event{Topic: "build.done", Payload: events.StringPayload(strings.Repeat("x", events.MaxLineBytes-200))}
	fitted, cut, err := events.FitPayload(ev)
	require.NoError(t, err)
	assert.Zero(t, cut)
	assert.Equal(t, ev, fitted)
}

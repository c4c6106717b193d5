package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// A wave's keys sit beside the others on the line, as ralph-orchestrator
// writes them, and survive a read and a write; a line without them
// renders as before.
func TestWaveFieldsRoundTrip(t *testing.T) {
	line := `{"ts":"2026-11-22T10:00:00Z","topic":"review.perspective","payload":"a","wave_id":"w-1","wave_index":0,"wave_total":3}`
	ev, err := events.ParseLine([]byte(line))
	require.NoError(t, err)
	require.True(t, ev.InWave())
	require.Equal(t, events.Wave{ID: "w-1", Index: 0, Total: 3}, *ev.Wave)
	out, err := events.EncodeLine(ev)
	require.NoError(t, err)
	require.Equal(t, line+"\n", string(out))

	plain, err := events.ParseLine([]byte(`{"ts":"2026-11-22T10:00:00Z","topic":"a.b","payload":null}`))
	require.NoError(t, err)
	require.False(t, plain.InWave())
	out, err = events.EncodeLine(plain)
	require.NoError(t, err)
	require.Equal(t, `{"ts":"2026-11-22T10:00:00Z","topic":"a.b","payload":null}`+"\n", string(out))
}

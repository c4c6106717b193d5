package events_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// A wave's keys sit beside the others on the line, as ralph-orchestrator
// writes them, and survive a read and a write; a line without them
// renders as before.
func TestWaveFieldsRoundTrip(t *testing.T) {
	// As ralph-orchestrator writes the first of a wave; ralph leaves out
	// a wave_index of 0.
	line := `{"ts":"2026-11-22T10:00:00Z","topic":"review.perspective","payload":"a","wave_id":"w-1","wave_index":0,"wave_total":3}`
	ev, err := events.ParseLine([]byte(line))
	require.NoError(t, err)
	require.True(t, ev.InWave())
	require.Equal(t, events.Wave{WaveID: "w-1", WaveIndex: 0, WaveTotal: 3}, *ev.Wave)
	out, err := events.EncodeLine(ev)
	require.NoError(t, err)
	require.Equal(t, strings.Replace(line, `"wave_index":0,`, "", 1)+"\n", string(out))
	again, err := events.ParseLine(out)
	require.NoError(t, err)
	require.Equal(t, *ev.Wave, *again.Wave)
	second := `{"ts":"2026-11-22T10:00:00Z","topic":"review.perspective","payload":"b","wave_id":"w-1","wave_index":1,"wave_total":3}`
	ev, err = events.ParseLine([]byte(second))
	require.NoError(t, err)
	out, err = events.EncodeLine(ev)
	require.NoError(t, err)
	require.Equal(t, second+"\n", string(out))

	plain, err := events.ParseLine([]byte(`{"ts":"2026-11-22T10:00:00Z","topic":"a.b","payload":null}`))
	require.NoError(t, err)
	require.False(t, plain.InWave())
	out, err = events.EncodeLine(plain)
	require.NoError(t, err)
	require.Equal(t, `{"ts":"2026-11-22T10:00:00Z","topic":"a.b","payload":null}`+"\n", string(out))
}

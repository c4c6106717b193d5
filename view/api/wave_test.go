package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
)

func TestAppendWaveWritesOneEventPerPayload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	e := Emit{Dir: dir, File: path, Topic: "review.perspective", Hat: "coordinator", Iteration: 1, Redactor: redact.New(nil, nil)}
	id, warning, err := e.AppendWave([]json.RawMessage{events.StringPayload("a"), events.StringPayload("b")}, time.Unix(0, 42))
	require.NoError(t, err)
	assert.Empty(t, warning)
	assert.True(t, strings.HasPrefix(id, "w-2a-"), id)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var got []events.Event
	require.NoError(t, events.Scan(f, func(r events.Record) error { got = append(got, r.Event); return r.Err }))
	require.Len(t, got, 2)
	for i, ev := range got {
		assert.Equal(t, events.Wave{WaveID: id, WaveIndex: i, WaveTotal: 2}, *ev.Wave)
		assert.Equal(t, events.SourceAgent, ev.Source)
		assert.Equal(t, "coordinator", ev.Hat)
	}
}

func TestAppendWaveRefuses(t *testing.T) {
	dir := t.TempDir()
	e := Emit{Dir: dir, File: filepath.Join(dir, "events.jsonl"), Redactor: redact.New(nil, nil)}
	for topic, msg := range map[string]string{"bad topic": "invalid topic", "iteration.started": "ralph's own"} {
		e.Topic = topic
		_, _, err := e.AppendWave([]json.RawMessage{events.StringPayload("a")}, time.Now())
		require.Error(t, err, topic)
		assert.Contains(t, err.Error(), msg)
	}
	e.Topic = "a.b"
	_, _, err := e.AppendWave(nil, time.Now())
	assert.ErrorContains(t, err, "at least one payload")
	assert.True(t, InWaveWorker([]string{"RALPH_WAVE_WORKER=1"}))
	assert.False(t, InWaveWorker([]string{"RALPH_WAVE_WORKER=0", "X=1"}))
}

package runfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// testdata/autopilot-v1 is what the previous ralph (state version 1, camelCase keys)
// left of an interrupted run: task a completed, b and c in slots 1 and 2,
// b having waited for a (task.held), and the run stopped resumable. It was
// written by that ralph's autopilot, not by hand.
const v1Run = "20261128-004300"

func copyV1(t *testing.T, ralphDir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(ralphDir, 0o700))
	for _, f := range []string{AutopilotStateFile, AutopilotEventsFile} {
		data, err := os.ReadFile(filepath.Join("testdata", "autopilot-v1", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(ralphDir, f), data, 0o600))
	}
}

func TestAStateAndLogOfVersion1Load(t *testing.T) {
	dir := t.TempDir()
	copyV1(t, dir)
	st, notice, err := LoadAutopilotState(dir, time.Now(), nil, nil)
	require.NoError(t, err)
	assert.Empty(t, notice, "a version 1 checkpoint is read, not moved aside")
	assert.Equal(t, AutopilotStateVersion, st.Version)
	assert.Equal(t, v1Run, st.RunID)
	assert.Equal(t, 5, st.MaxTasks)
	assert.Equal(t, 3, st.StartedCount)
	assert.Equal(t, time.Date(2026, 11, 28, 0, 43, 0, 158037703, time.UTC), st.StartedAt.UTC())
	require.Len(t, st.Active, 2)
	assert.Equal(t, "b", st.Active["1"].Task)
	assert.Equal(t, time.Date(2026, 11, 28, 0, 43, 0, 371410369, time.UTC), st.Active["1"].StartedAt.UTC())
	assert.Equal(t, []string{"api"}, st.Active["1"].Components)
	require.Len(t, st.Completed, 1)
	assert.Equal(t, "a", st.Completed[0].Task)

	// The log alone, spelled the old way, folds into the same state.
	require.NoError(t, os.Remove(filepath.Join(dir, AutopilotStateFile)))
	fromLog, _, err := LoadAutopilotState(dir, time.Now(), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, st, fromLog)

	byTopic := map[string]AutopilotPayload{}
	f, err := os.Open(filepath.Join(dir, AutopilotEventsFile))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, events.Scan(f, func(rec events.Record) error {
		ev, err := events.ParseLine(rec.Line)
		require.NoError(t, err)
		byTopic[ev.Topic] = DecodeAutopilotPayload(ev)
		return nil
	}))
	assert.Equal(t, "a", byTopic[TopicTaskHeld].HeldBy)
	require.NotNil(t, byTopic[TopicAutopilotStopped].ExitCode)
	assert.Equal(t, 130, *byTopic[TopicAutopilotStopped].ExitCode)
}

package runfiles

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The status of a run whose ralph has exited reads as ReadStatus reads it,
// without asking who holds the lock.
func TestReadExitedStatusIsReadStatusOfAnEndedRun(t *testing.T) {
	workspace := t.TempDir()
	d := In(workspace)
	require.NoError(t, os.MkdirAll(d.Path(), 0o755))
	st := NewRunState()
	st.RunID, st.Iteration, st.CostUSD, st.EventsFile = "r-1", 2, 0.25, ".ralph/events-20261128-190000.jsonl"
	st.Terminated = &Termination{Reason: ReasonCompleted, ExitCode: 0, Message: "the objective is met", At: time.Now().UTC()}
	require.NoError(t, Checkpoint{Path: d.State()}.Save(st, PhaseDone, time.Now()))

	now := time.Now()
	want, err := ReadStatus(workspace, 0, now)
	require.NoError(t, err)
	require.NotNil(t, want.Ended)
	got, err := ReadExitedStatus(workspace, 0, now)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.False(t, got.Running)
	assert.Equal(t, ReasonCompleted, got.Ended.Reason)
}

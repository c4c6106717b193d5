package runfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseControlRequest(t *testing.T) {
	for _, req := range requestOrder {
		got, err := ParseControlRequest(string(req))
		require.NoError(t, err)
		assert.Equal(t, req, got)
	}
	_, err := ParseControlRequest("halt")
	assert.EqualError(t, err, `autopilot request "halt": want pause, resume, stop or stop-now`)
}

// A request the autopilot would never take is refused, not written as a
// file nobody reads.
func TestRequestRefusesAnUnknownRequest(t *testing.T) {
	repo := t.TempDir()
	require.Error(t, RequestControl(repo, ControlRequest("halt")))
	_, err := os.Stat(filepath.Join(In(repo).Control(), "halt"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, RequestControl(repo, ControlPause))
	require.NoError(t, RequestControl(repo, ControlResume))
	assert.Equal(t, []ControlRequest{ControlResume}, TakeControlRequests(In(repo).Control()),
		"a resume cancels the pause before it")
}

package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

func TestAgentPIDFileIsRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	e := newTestEngine(t, dir, happy(), settings())
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	path := filepath.Join(e.dir, runfiles.AgentPIDFile)
	require.NoError(t, os.WriteFile(path, []byte("1234567890\n12345678901234567890\n"), 0o600))
	first, err := os.Stat(path)
	require.NoError(t, err)

	pid := os.Getpid()
	e.recordAgent(pid)
	start, _ := processStart(pid)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(pid)+"\n"+start+"\n", string(data), "a shorter record leaves nothing of the longer one")
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		assert.NotEmpty(t, start, "the agent's start time is recorded")
	}
	assert.Equal(t, agentRecord{pgid: pid, start: start}, parseAgentRecord(data))

	e.forgetAgent()
	again, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, again.Size(), "no agent runs")
	assert.True(t, os.SameFile(first, again), "the same file throughout, not a new one per agent")
}

package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentPIDFileIsRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	e := newTestEngine(t, dir, happy(), settings())
	require.NoError(t, os.MkdirAll(e.dir, 0o755))
	path := filepath.Join(e.dir, AgentPIDFile)

	e.recordAgent(1234567)
	first, err := os.Stat(path)
	require.NoError(t, err)
	e.recordAgent(42)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "42\n", string(data), "a shorter pid leaves nothing of the longer one")

	e.forgetAgent()
	again, err := os.Stat(path)
	require.NoError(t, err)
	assert.Zero(t, again.Size(), "no agent runs")
	assert.True(t, os.SameFile(first, again), "the same file throughout, not a new one per agent")
}

// A ralph killed outright leaves its agent running; the next one stops the
// agent's whole process group before anything else.
func TestOrphanedAgentIsStopped(t *testing.T) {
	dir := t.TempDir()
	w := &warnRecorder{}
	e := newTestEngine(t, dir, happy(), settings(), func(o *Options) { o.Reporter = w; o.KillGrace = 10 * time.Second })
	require.NoError(t, os.MkdirAll(e.dir, 0o755))

	orphan := exec.Command("sleep", "600")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, orphan.Start())
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	// A ralph killed half-way through rewriting the file leaves the new
	// pid's line first and a remnant of an older, longer one after it.
	pgid := orphan.Process.Pid
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, AgentPIDFile), []byte(strconv.Itoa(pgid)+"\n99999\n"), 0o644))

	require.NoError(t, e.stopOrphanedAgent())
	err := <-exited
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	status, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.Equal(t, syscall.SIGTERM, status.Signal(), "SIGTERM first; SIGKILL only after the grace period")
	require.Len(t, w.warnings, 1)
	assert.Contains(t, w.warnings[0], "stopping agent process group "+strconv.Itoa(pgid))
	data, err := os.ReadFile(filepath.Join(e.dir, AgentPIDFile))
	require.NoError(t, err)
	assert.Empty(t, data)

	w.warnings = nil
	require.NoError(t, e.stopOrphanedAgent())
	assert.Empty(t, w.warnings, "an empty file names no agent")
}

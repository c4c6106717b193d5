//go:build unix

package procgroup

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that a terminal's signal reached before it left ralph's group
// is run again, once; one that dies of it again, or fails otherwise, is
// not.
func TestRunDetachedRunsAgainACommandKilledByATerminalSignal(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	// The first run dies of SIGINT, as a child the group's Ctrl-C reached
	// between fork and setpgid would; the second finds the marker and
	// succeeds.
	script := `if [ -e "$1" ]; then exit 0; fi; : > "$1"; kill -INT $$`
	runs := 0
	err := RunDetached(func() *exec.Cmd {
		runs++
		return exec.Command("sh", "-c", script, "sh", marker)
	})
	require.NoError(t, err)
	assert.Equal(t, 2, runs)

	runs = 0
	err = RunDetached(func() *exec.Cmd {
		runs++
		return exec.Command("sh", "-c", `kill -INT $$`)
	})
	assert.True(t, diedOfTerminalSignal(err), "%v", err)
	assert.Equal(t, 2, runs, "once more, not forever")

	runs = 0
	err = RunDetached(func() *exec.Cmd {
		runs++
		return exec.Command("sh", "-c", `kill -KILL $$`)
	})
	require.Error(t, err)
	assert.Equal(t, 1, runs, "SIGKILL is ralph's own (a context's end), not a terminal's")
}

// A detached command leads a process group of its own, so a signal to
// ralph's group does not reach it.
func TestDetachLeavesTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", `ps -o pgid= -p $$`)
	Detach(cmd)
	out, err := cmd.Output()
	require.NoError(t, err)
	pgid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	assert.Equal(t, cmd.Process.Pid, pgid)
}

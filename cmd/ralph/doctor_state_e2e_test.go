package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.ProcessState.Pid()
}

// doctorState runs `ralph doctor --json` with args and returns what it
// found in ralph's own state.
func doctorState(t *testing.T, w *workspace, args ...string) view.StateReport {
	t.Helper()
	r := w.ralph(append([]string{"doctor", "--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		State view.StateReport `json:"state"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	return rep.State
}

func findingsOf(rep view.StateReport, kind string) []view.StateFinding {
	var out []view.StateFinding
	for _, f := range rep.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// TestDoctorFindsAndFixesLeftovers: `ralph doctor` finds a planted stale
// lock, an autopilot task's worktree with no task (not one whose task
// runs), one git would prune and
// a cut-off write's temporary file, and says how to fix each; --fix
// clears the lock, removes the temporary file and prunes, and leaves the
// orphan worktree and the pruned one's branch, which may hold work, to a
// person.
func TestDoctorFindsAndFixesLeftovers(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: x\n"+agentCLI())
	git(t, w.dir, "add", "ralph.yml")
	git(t, w.dir, "commit", "-q", "-m", "config")
	git(t, w.dir, "worktree", "add", "-q", ".worktrees/t1", "-b", "ralph/t1")
	git(t, w.dir, "worktree", "add", "-q", ".worktrees/t2", "-b", "ralph/t2")
	require.NoError(t, os.RemoveAll(filepath.Join(w.dir, ".worktrees", "t2")))
	git(t, w.dir, "worktree", "add", "-q", ".worktrees/t3", "-b", "ralph/t3")

	ralphDir := filepath.Join(w.dir, ".ralph")
	require.NoError(t, os.MkdirAll(ralphDir, 0o700))
	// The autopilot has t3 running: its worktree is no orphan.
	require.NoError(t, os.WriteFile(filepath.Join(ralphDir, runfiles.AutopilotEventsFile), []byte(
		`{"ts":"2026-11-28T10:00:00Z","topic":"autopilot.started","payload":{"run_id":"ap1"},"source":"ralph"}`+"\n"+
			`{"ts":"2026-11-28T10:00:01Z","topic":"task.assigned","payload":{"task":"t3","slot":"1","attempt":1},"source":"ralph"}`+"\n"), 0o600))
	lock := filepath.Join(ralphDir, runfiles.LockFile)
	holder := runfiles.LockInfo{RunID: "20261101-100000-abcdef", PID: deadPID(t), Host: "here", StartedAt: time.Now().Add(-time.Hour)}
	data, err := json.Marshal(holder)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lock, append(data, '\n'), 0o600))
	temp := filepath.Join(ralphDir, ".state.json1234567890123")
	require.NoError(t, os.WriteFile(temp, []byte(`{"half":`), 0o600))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(temp, old, old))
	fresh := filepath.Join(ralphDir, ".state.json9876543210987")
	require.NoError(t, os.WriteFile(fresh, []byte(`{"being written":`), 0o600))

	rep := doctorState(t, w)
	require.Len(t, findingsOf(rep, view.FindingStaleLock), 1, "%+v", rep)
	stale := findingsOf(rep, view.FindingStaleLock)[0]
	assert.Contains(t, stale.What, "names pid")
	assert.True(t, stale.Safe)
	orphans := findingsOf(rep, view.FindingOrphanWorktree)
	require.Len(t, orphans, 1, "%+v", rep)
	assert.Equal(t, filepath.Join(".worktrees", "t1"), orphans[0].Path)
	assert.Contains(t, orphans[0].Fix, "git worktree remove .worktrees/t1 && git branch -d ralph/t1")
	assert.False(t, orphans[0].Safe)
	require.Len(t, findingsOf(rep, view.FindingPrunable), 1, "%+v", rep)
	temps := findingsOf(rep, view.FindingTempFile)
	require.Len(t, temps, 1, "a temporary file being written now is no leftover: %+v", rep)
	assert.Equal(t, filepath.Join(".ralph", filepath.Base(temp)), temps[0].Path)
	assert.FileExists(t, temp, "without --fix nothing changes")
	info, err := runfiles.ReadLockInfo(lock)
	require.NoError(t, err)
	assert.Equal(t, holder.PID, info.PID)

	text := w.ralph("doctor")
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "ralph's own state:")
	assert.Contains(t, text.stdout, "`ralph doctor --fix` fixes 3 problems")

	fixed := w.ralph("doctor", "--fix")
	require.Equal(t, 0, fixed.code, fixed.stderr)
	assert.Contains(t, fixed.stdout, "3 problems fixed; 2 problems left for a person")
	_, err = runfiles.ReadLockInfo(lock)
	assert.Error(t, err, "the lock names no holder")
	assert.FileExists(t, lock, "the lock file stays, as a ralph leaves it")
	assert.NoFileExists(t, temp)
	assert.FileExists(t, fresh)
	assert.DirExists(t, filepath.Join(w.dir, ".worktrees", "t1"))

	rep = doctorState(t, w)
	require.Len(t, rep.Findings, 2, "%+v", rep)
	assert.Len(t, findingsOf(rep, view.FindingOrphanWorktree), 1)
	branches := findingsOf(rep, view.FindingOrphanBranch)
	require.Len(t, branches, 1, "the pruned worktree's branch is left, for a person")
	assert.Equal(t, "if task t2 is done with: `git branch -d ralph/t2`", branches[0].Fix)
	loop := w.ralph("loop")
	assert.NotContains(t, loop.stderr, "took over", "the lock was free")
}

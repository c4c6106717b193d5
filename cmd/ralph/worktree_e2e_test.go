package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
)

// taskWorktrees makes, as the autopilot would, task worktrees in w: T-1
// with a commit and an uncommitted change, T-2 with nothing not merged,
// T-3 whose task the autopilot's log has running.
func taskWorktrees(t *testing.T, w *workspace) {
	t.Helper()
	w.write("ralph.yml", "event_loop:\n  prompt: x\n"+agentCLI())
	git(t, w.dir, "add", "ralph.yml")
	git(t, w.dir, "commit", "-q", "-m", "config")
	for _, id := range []string{"T-1", "T-2", "T-3"} {
		git(t, w.dir, "worktree", "add", "-q", filepath.Join(".worktrees", id), "-b", "ralph/"+id)
	}
	t1 := filepath.Join(w.dir, ".worktrees", "T-1")
	require.NoError(t, os.WriteFile(filepath.Join(t1, "parser.go"), []byte("package parser\n"), 0o644))
	git(t, t1, "add", "parser.go")
	git(t, t1, "commit", "-q", "-m", "parse the header")
	require.NoError(t, os.WriteFile(filepath.Join(t1, "ralph.yml"), []byte("changed by hand\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(t1, "notes.txt"), []byte("new\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(w.dir, ".ralph"), 0o700))
	log := `{"ts":"2026-11-28T10:00:00Z","topic":"autopilot.started","payload":{"run_id":"ap1","source":"checklist"},"source":"ralph"}` + "\n" +
		`{"ts":"2026-11-28T10:00:01Z","topic":"task.assigned","payload":{"task":"T-3","slot":"1","branch":"ralph/T-3","attempt":1},"source":"ralph"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, ".ralph", "autopilot-events.jsonl"), []byte(log), 0o600))
}

// TestWorktreeListDiffClean: `ralph worktree` lists the autopilot's task
// worktrees with what each holds that the checkout's branch does not,
// shows that as a diff, and cleans the one that holds nothing; --force
// removes the one with work, never one whose task is in progress.
func TestWorktreeListDiffClean(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	taskWorktrees(t, w)

	r := w.ralph("worktree", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []autopilot.WorktreeStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 3)
	byName := map[string]autopilot.WorktreeStatus{}
	for _, st := range list {
		assert.Equal(t, autopilot.WorktreeTask, st.Kind)
		byName[st.Name] = st
	}
	require.NotNil(t, byName["T-1"].Ahead)
	assert.Equal(t, 1, *byName["T-1"].Ahead)
	assert.Equal(t, 2, byName["T-1"].Uncommitted, "a changed file and a new one")
	require.NotNil(t, byName["T-2"].Ahead)
	assert.Equal(t, 0, *byName["T-2"].Ahead)
	assert.True(t, byName["T-3"].InProgress)

	text := w.ralph("worktrees") // the old name still works
	require.Equal(t, 0, text.code, text.stderr)
	assert.Regexp(t, `(?m)^task +T-1 +no run yet +ralph/T-1 +1 commit not in main, 2 uncommitted +\.worktrees/T-1$`, text.stdout)
	assert.Regexp(t, `(?m)^task +T-3 +no run yet, task in progress +ralph/T-3 +merged into main `, text.stdout)

	diff := w.ralph("worktree", "diff", "T-1")
	require.Equal(t, 0, diff.code, diff.stderr)
	assert.Contains(t, diff.stdout, "# task T-1: 1 commit on ralph/T-1 not in main\n")
	assert.Contains(t, diff.stdout, " parse the header\n")
	assert.Contains(t, diff.stdout, "+++ b/parser.go\n")
	assert.Contains(t, diff.stdout, "\n+package parser\n")
	assert.Contains(t, diff.stdout, "# uncommitted in its worktree:\n")
	assert.Contains(t, diff.stdout, "+changed by hand\n")
	assert.Contains(t, diff.stdout, "# untracked: notes.txt\n")
	var d autopilot.WorktreeDiff
	asJSON := w.ralph("worktree", "diff", "ralph/T-1", "--json")
	require.Equal(t, 0, asJSON.code, asJSON.stderr)
	require.NoError(t, json.Unmarshal([]byte(asJSON.stdout), &d))
	require.Len(t, d.Commits, 1)
	assert.Equal(t, "parse the header", d.Commits[0].Subject)
	assert.Equal(t, []string{"notes.txt"}, d.Untracked)
	nope := w.ralph("worktree", "diff", "../x")
	assert.Equal(t, 3, nope.code)
	assert.Contains(t, nope.stderr, "ralph: hint: ralph worktree lists the worktrees by name")

	clean := w.ralph("worktree", "clean")
	require.Equal(t, 0, clean.code, clean.stderr)
	assert.Contains(t, clean.stdout, "removed task T-2 (.worktrees/T-2, branch ralph/T-2)\n")
	assert.Contains(t, clean.stdout, "kept task T-1: 2 uncommitted changes in it: commit them, or remove it with --force\n")
	assert.Contains(t, clean.stdout, "kept task T-3: the autopilot has task T-3 in progress")
	assert.NoDirExists(t, filepath.Join(w.dir, ".worktrees", "T-2"))
	assert.NotContains(t, git(t, w.dir, "branch", "--list", "ralph/*"), "ralph/T-2")

	forced := w.ralph("worktree", "clean", "--force", "--json")
	require.Equal(t, 0, forced.code, forced.stderr)
	var done struct {
		Removed []autopilot.WorktreeStatus `json:"removed"`
		Kept    []autopilot.KeptWorktree   `json:"kept"`
	}
	require.NoError(t, json.Unmarshal([]byte(forced.stdout), &done), forced.stdout)
	require.Len(t, done.Removed, 1)
	assert.Equal(t, "T-1", done.Removed[0].Name)
	require.Len(t, done.Kept, 1, "--force never removes a task in progress")
	assert.Equal(t, "T-3", done.Kept[0].Name)
	assert.NoDirExists(t, filepath.Join(w.dir, ".worktrees", "T-1"))
	assert.DirExists(t, filepath.Join(w.dir, ".worktrees", "T-3"))
	assert.Equal(t, "ralph/T-3", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(git(t, w.dir, "branch", "--list", "ralph/*")), "+")))
}

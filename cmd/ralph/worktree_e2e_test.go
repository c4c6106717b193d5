package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/view"
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

// TestWorktreeCleanRemovesTheSparesAKilledAutopilotLeft: an autopilot
// keeps a merged task's worktree as a spare for its next tasks; killed
// while its third task runs, it leaves them. While it runs, clean keeps the
// spare and doctor says nothing of it; once it is killed, `ralph worktree`
// lists it, doctor reports it, and clean removes it with git's
// registration of it, and the task's worktree it was running stays;
// doctor --fix removes one too.
func TestWorktreeCleanRemovesTheSparesAKilledAutopilotLeft(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  parallel: 2\n")
	w.write("TODO.md", "- [ ] One\n- [ ] Two\n- [ ] Three\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{
		Sh: `task=$(basename "$PWD"); if [ "$task" = three ]; then touch "$SCRIPTAGENT_STATE/running-three"; ` + waitRelease + `fi; ` +
			`echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	cmd, stderr := w.startRalph("autopilot")
	// A merged task's worktree, or the merge queue's, becomes a spare: how
	// many the run has when it is killed is read once it is.
	spares := filepath.Join(w.dir, ".worktrees", ".spare")
	waitFor(t, "three's agent, and a spare registered with git", func() bool {
		entries, _ := os.ReadDir(spares)
		return fileExists(filepath.Join(w.state, "running-three")) && len(entries) > 0 &&
			strings.Contains(git(t, w.dir, "worktree", "list", "--porcelain"), "/.worktrees/.spare/"+entries[0].Name()+"\n")
	})
	running := w.ralph("worktree", "clean", "--json")
	require.Equal(t, 0, running.code, running.stderr)
	var done struct {
		Removed []autopilot.WorktreeStatus `json:"removed"`
		Kept    []autopilot.KeptWorktree   `json:"kept"`
	}
	require.NoError(t, json.Unmarshal([]byte(running.stdout), &done), running.stdout)
	assert.Empty(t, done.Removed)
	var keptSpare []autopilot.KeptWorktree
	for _, k := range done.Kept {
		if k.Kind == autopilot.WorktreeSpare {
			keptSpare = append(keptSpare, k)
		}
	}
	require.NotEmpty(t, keptSpare, running.stdout)
	for _, k := range keptSpare {
		assert.Contains(t, k.Why, "an autopilot runs in this repository")
	}
	assert.Empty(t, findingsOf(doctorState(t, w), view.FindingSpareWorktree), "a running autopilot's spares are no leftover")

	killTree(cmd.Process.Pid)
	require.Equal(t, -1, exitCodeOf(cmd.Wait()), stderr.String())
	entries, err := os.ReadDir(spares)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.NotEmpty(t, names, "the killed run left its spares")

	text := w.ralph("worktree")
	require.Equal(t, 0, text.code, text.stderr)
	for _, name := range names {
		spare := filepath.Join(".worktrees", ".spare", name)
		assert.Regexp(t, `(?m)^spare +`+name+` +- +detached +- +`+regexp.QuoteMeta(spare)+`$`, text.stdout)
	}
	asJSON := w.ralph("worktree", "--json")
	require.Equal(t, 0, asJSON.code, asJSON.stderr)
	var list []autopilot.WorktreeStatus
	require.NoError(t, json.Unmarshal([]byte(asJSON.stdout), &list), asJSON.stdout)
	require.NotEmpty(t, list)
	assert.Equal(t, autopilot.WorktreeSpare, list[len(list)-1].Kind, "the spares come last")

	found := findingsOf(doctorState(t, w), view.FindingSpareWorktree)
	require.Len(t, found, 1)
	assert.Equal(t, filepath.Join(".worktrees", ".spare"), found[0].Path)
	assert.Contains(t, found[0].What, plural.Count(len(names), "spare worktree", "spare worktrees")+" in .worktrees/.spare")
	assert.Contains(t, found[0].Fix, "`ralph worktree clean`")

	clean := w.ralph("worktree", "clean")
	require.Equal(t, 0, clean.code, clean.stderr)
	for _, name := range names {
		spare := filepath.Join(".worktrees", ".spare", name)
		assert.Contains(t, clean.stdout, "removed spare "+name+" ("+spare+", a killed autopilot run's, reset to its base)\n")
	}
	assert.Contains(t, clean.stdout, "kept task three: the autopilot has task three in progress")
	assert.NoDirExists(t, spares)
	assert.NotContains(t, git(t, w.dir, "worktree", "list", "--porcelain"), "/.worktrees/.spare/")
	assert.DirExists(t, filepath.Join(w.dir, ".worktrees", "three"))
	assert.Empty(t, findingsOf(doctorState(t, w), view.FindingSpareWorktree))

	// doctor --fix removes them too: they hold nothing of anyone's.
	git(t, w.dir, "worktree", "add", "-q", "--detach", filepath.Join(spares, "7"), "HEAD")
	fixed := findingsOf(doctorState(t, w, "--fix"), view.FindingSpareWorktree)
	require.Len(t, fixed, 1)
	assert.True(t, fixed[0].Fixed, fixed[0].FixError)
	assert.NoDirExists(t, spares)
	assert.NotContains(t, git(t, w.dir, "worktree", "list", "--porcelain"), "/.worktrees/.spare/")
}

//go:build unix

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

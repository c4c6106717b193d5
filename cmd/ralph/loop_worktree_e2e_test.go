package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
)

// ralph loop --worktree: a loop in a worktree and on a branch of its own,
// run beside a loop in the checkout or the autopilot, resumed after a kill,
// listed and cleaned with ralph worktrees.

// meetingAgent is a script whose agent, in every workspace, says it has
// started (at-<workspace> in the state directory), waits until as many
// agents have started as the state's want file says, then writes
// <workspace>.txt, commits it and completes. Agents that could not run at
// once would wait for ever: each gives up after a minute and fails.
func meetingAgent() agentScript {
	return agentScript{Steps: []step{{
		Sh: `name=$(basename "$PWD"); touch "$SCRIPTAGENT_STATE/at-$name"; want=$(cat "$SCRIPTAGENT_STATE/want"); i=0; ` +
			`while [ "$(ls "$SCRIPTAGENT_STATE" | grep -c '^at-')" -lt "$want" ]; do ` +
			`i=$((i+1)); [ $i -lt 1200 ] || { echo "only $(ls "$SCRIPTAGENT_STATE" | grep '^at-') met" >&2; exit 1; }; sleep 0.05; done; ` +
			`echo "$name" > "$name.txt"`,
		Commit: "do the work",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}}
}

// want says how many agents meetingAgent's agents wait for.
func (w *workspace) want(n string) {
	w.t.Helper()
	require.NoError(w.t, os.WriteFile(filepath.Join(w.state, "want"), []byte(n), 0o644))
}

// loopWorktree is the path of the loop worktree called name.
func (w *workspace) loopWorktree(name string) string {
	return filepath.Join(w.dir, ".worktrees", autopilot.LoopsDir, name)
}

// filesOn lists the files of branch's tree.
func (w *workspace) filesOn(branch string) []string {
	w.t.Helper()
	return strings.Fields(git(w.t, w.dir, "ls-tree", "--name-only", branch))
}

func TestLoopWorktreeRunsBesideALoopInTheCheckout(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.script(meetingAgent())
	w.want("2")

	inCheckout, _ := w.startRalph("loop", "-p", "work in the checkout")
	r := w.ralph("loop", "--worktree", "side", "-p", "work beside it")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NoError(t, inCheckout.Wait(), "the loop in the checkout completed")

	dir := w.loopWorktree("side")
	assert.Contains(t, r.stderr, "ralph: made the worktree .worktrees/.loops/side on branch ralph-loop/side from main")
	assert.Contains(t, w.filesOn("ralph-loop/side"), "side.txt", "the worktree loop's commit is on its branch")
	assert.NotContains(t, w.filesOn("ralph-loop/side"), filepath.Base(w.dir)+".txt")
	assert.Contains(t, w.filesOn("main"), filepath.Base(w.dir)+".txt", "the checkout loop's commit is on main")
	assert.NotContains(t, w.filesOn("main"), "side.txt")
	assert.Equal(t, "ralph-loop/side", strings.TrimSpace(git(t, dir, "branch", "--show-current")))
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")), "the worktree is no change of the checkout")

	st := runRalph(t, "status", "-C", dir, "--json")
	require.Equal(t, 0, st.code, st.stderr)
	var status struct {
		Ended struct{ Reason string } `json:"ended"`
	}
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &status))
	assert.Equal(t, "completed", status.Ended.Reason, "the loop's .ralph/ is in its worktree")

	r = w.ralph("worktrees")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^loop +side +completed \(exit 0\) +ralph-loop/side +1 commit not in main +\.worktrees/\.loops/side$`, r.stdout)
}

// An autopilot runs while a loop runs in a worktree, in either order: the
// loop is not in the checkout the autopilot merges into.
func TestLoopWorktreeRunsBesideTheAutopilot(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.script(meetingAgent())
	w.write("TODO.md", "- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")

	// The autopilot first, then the loop.
	w.want("2")
	pilot, pilotErr := w.startRalph("autopilot")
	waitFor(t, "the autopilot's task to start", func() bool { return fileExists(filepath.Join(w.state, "at-one")) })
	r := w.ralph("loop", "--worktree", "side", "-p", "work beside the autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NoError(t, pilot.Wait(), pilotErr.String())
	assert.Equal(t, []string{"one"}, w.mergedOrder())
	assert.Contains(t, w.filesOn("ralph-loop/side"), "side.txt")
	assert.NotContains(t, w.filesOn("main"), "side.txt")

	// The loop first, then the autopilot.
	w.write("TODO.md", w.read("TODO.md")+"- [ ] Two\n")
	git(t, w.dir, "commit", "-q", "-am", "another task")
	w.want("4")
	loop, loopErr := w.startRalph("loop", "--worktree", "later", "-p", "work before the autopilot")
	waitFor(t, "the worktree loop's agent to start", func() bool { return fileExists(filepath.Join(w.state, "at-later")) })
	r = w.ralph("autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NoError(t, loop.Wait(), loopErr.String())
	assert.Equal(t, []string{"one", "two"}, w.mergedOrder())
	assert.Contains(t, w.filesOn("ralph-loop/later"), "later.txt")
	assert.Contains(t, w.read("TODO.md"), "- [x] Two")

	r = w.ralph("worktrees", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []autopilot.LoopWorktreeStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 2, "the autopilot's task worktrees are not the loops'")
	assert.Equal(t, "later", list[0].Name)
	assert.Equal(t, "side", list[1].Name)
}

func TestLoopWorktreeResumesAfterAKill(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	// The first iteration commits; the second waits to be killed, unless
	// it was already.
	w.script(agentScript{Steps: []step{
		{Write: map[string]string{"first.txt": "1\n"}, Commit: "the first part"},
		{Sh: `[ -e "$SCRIPTAGENT_STATE/killed" ] || { touch "$SCRIPTAGENT_STATE/second"; sleep 120; }; echo 2 > second.txt`,
			Commit: "the second part", Say: `<event topic="LOOP_COMPLETE">done</event>`},
	}})
	dir := w.loopWorktree("wip")

	loop, _ := w.startRalph("loop", "--worktree", "wip", "-p", "two parts")
	waitFor(t, "the second iteration's agent", func() bool { return fileExists(filepath.Join(w.state, "second")) })
	before := w.statusIn(dir)
	require.NoError(t, loop.Process.Kill())
	_ = loop.Wait()
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "killed"), nil, 0o644))

	r := w.ralph("worktrees")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^loop +wip +unfinished +ralph-loop/wip +1 commit not in main `, r.stdout)
	r = w.ralph("worktrees", "clean")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "kept loop wip: its run is unfinished: go on with it (ralph loop --worktree wip --resume), or remove it with --force\n"+
		"0 worktrees removed, 1 kept\n", r.stdout)
	assert.DirExists(t, dir)

	r = w.ralph("loop", "--worktree", "wip", "--resume")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "ralph: the loop runs in the worktree .worktrees/.loops/wip on branch ralph-loop/wip")
	after := w.statusIn(dir)
	assert.Equal(t, before.RunID, after.RunID, "the same run went on")
	assert.Equal(t, "completed", after.Ended.Reason)
	assert.Equal(t, "the second part\nthe first part\nstart", git(t, w.dir, "log", "--format=%s", "ralph-loop/wip"))
	assert.NotContains(t, w.filesOn("main"), "first.txt")
}

// statusIn is ralph status --json of the workspace dir.
func (w *workspace) statusIn(dir string) (s struct {
	RunID string `json:"run_id"`
	Ended struct {
		Reason string `json:"reason"`
	} `json:"ended"`
}) {
	w.t.Helper()
	r := runRalph(w.t, "status", "-C", dir, "--json")
	require.Equal(w.t, 0, r.code, r.stderr)
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &s))
	return s
}

func TestLoopWorktreesAreListedAndCleaned(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.script(agentScript{Steps: []step{{
		Sh: `name=$(basename "$PWD"); if [ "$name" = busy ]; then touch "$SCRIPTAGENT_STATE/busy"; ` +
			`i=0; while [ ! -e "$SCRIPTAGENT_STATE/go" ]; do i=$((i+1)); [ $i -lt 1200 ] || exit 1; sleep 0.05; done; fi; ` +
			`echo "$name" > "$name.txt"`,
		Commit: "do the work",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	for _, name := range []string{"merged", "ahead", "dirty"} {
		r := w.ralph("loop", "--worktree", name, "-p", "work on "+name)
		require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
	}
	git(t, w.dir, "merge", "-q", "--no-edit", "ralph-loop/merged")
	w.write(".worktrees/.loops/dirty/notes.txt", "not committed\n")
	busy, _ := w.startRalph("loop", "--worktree", "busy", "-p", "keep busy")
	waitFor(t, "the busy loop's agent", func() bool { return fileExists(filepath.Join(w.state, "busy")) })

	r := w.ralph("worktrees", "list")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 5, r.stdout)
	assert.Regexp(t, `^KIND +NAME +LOOP +BRANCH +NOT MERGED +PATH$`, lines[0])
	assert.Regexp(t, `^loop +ahead +completed \(exit 0\) +ralph-loop/ahead +1 commit not in main +\.worktrees/\.loops/ahead$`, lines[1])
	assert.Regexp(t, `^loop +busy +running \(pid [0-9]+\) +ralph-loop/busy +merged into main +\.worktrees/\.loops/busy$`, lines[2])
	assert.Regexp(t, `^loop +dirty +completed \(exit 0\) +ralph-loop/dirty +1 commit not in main, 1 uncommitted +`, lines[3])
	assert.Regexp(t, `^loop +merged +completed \(exit 0\) +ralph-loop/merged +merged into main +`, lines[4])

	r = w.ralph("worktrees", "clean")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "removed loop merged (.worktrees/.loops/merged, branch ralph-loop/merged)\n"+
		"kept loop ahead: 1 commit not merged into main: merge ralph-loop/ahead, or remove it with --force\n"+
		"kept loop busy: its loop is running (pid "+lockPID(t, w.loopWorktree("busy"))+"): stop it first (ralph stop -C "+w.loopWorktree("busy")+")\n"+
		"kept loop dirty: 1 uncommitted change in it: commit them, or remove it with --force\n"+
		"1 worktree removed, 3 kept\n", r.stdout)
	assert.NoDirExists(t, w.loopWorktree("merged"))
	assert.False(t, branchExists(t, w.dir, "ralph-loop/merged"))
	assert.Contains(t, w.filesOn("main"), "merged.txt", "what was merged stays")

	r = w.ralph("worktrees", "clean", "--force", "busy", "ahead")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "kept loop busy: its loop is running")
	assert.Contains(t, r.stdout, "removed loop ahead (")
	assert.DirExists(t, w.loopWorktree("busy"), "a running loop's worktree is never removed")
	assert.DirExists(t, w.loopWorktree("dirty"), "only the worktrees named are cleaned")
	assert.False(t, branchExists(t, w.dir, "ralph-loop/ahead"))

	r = w.ralph("worktrees", "clean", "nope")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, `ralph: error: no worktree of ralph's is called "nope"`)
	assert.Contains(t, r.stderr, "ralph: hint: ralph worktree list lists them")

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "go"), nil, 0o644))
	require.NoError(t, busy.Wait())
	// A finished worktree's loop starts again in the same worktree.
	r = w.ralph("loop", "--worktree", "busy", "-p", "once more")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "ralph: the loop runs in the worktree .worktrees/.loops/busy on branch ralph-loop/busy")
	assert.Equal(t, "do the work\ndo the work\nstart", git(t, w.dir, "log", "--format=%s", "ralph-loop/busy"))
	r = w.ralph("worktrees", "clean", "--force")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "removed loop busy (.worktrees/.loops/busy, branch ralph-loop/busy)\n"+
		"removed loop dirty (.worktrees/.loops/dirty, branch ralph-loop/dirty)\n2 worktrees removed, 0 kept\n", r.stdout)
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "branch", "--list", "ralph-loop/*")))
	assert.Len(t, strings.Split(strings.TrimSpace(git(t, w.dir, "worktree", "list")), "\n"), 1)
	r = w.ralph("worktrees")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "no worktrees of ralph's here; ralph loop --worktree and ralph autopilot make them\n", r.stdout)
}

// Without a name, one is made from the objective's first words, with a
// number when that is taken; a name that cannot name a branch is refused.
func TestLoopWorktreeNames(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.script(agentScript{Steps: []step{say(`<event topic="LOOP_COMPLETE">done</event>`)}})
	for _, want := range []string{"add-json-flag-export", "add-json-flag-export-2"} {
		r := w.ralph("loop", "--worktree", "-p", "Add a --json flag to the export command")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stderr, "ralph: made the worktree .worktrees/.loops/"+want+" on branch ralph-loop/"+want+" from main")
		assert.True(t, branchExists(t, w.dir, "ralph-loop/"+want))
	}

	for args, want := range map[string]string{
		"loop --worktree=has/slash -p x": `ralph: error: loop (run): --worktree: worktree name "has/slash" contains '/'`,
		"loop --worktree --resume":       "ralph: error: loop (run): --resume --worktree needs the name of the worktree whose run to resume",
		"worktrees clean ../up":          `ralph: error: worktree name "../up" starts with "."`,
	} {
		r := w.ralph(strings.Fields(args)...)
		assert.Equal(t, 3, r.code, args)
		assert.Contains(t, r.stderr, want, args)
	}
	assert.NoDirExists(t, filepath.Join(w.dir, ".worktrees", ".loops", "has"))
	r := w.ralph("loop", "--worktree", "never-made", "--resume")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: there is no loop worktree never-made (.worktrees/.loops/never-made) to resume\n")
	assert.NoDirExists(t, w.loopWorktree("never-made"))
	assert.False(t, branchExists(t, w.dir, "ralph-loop/never-made"))

	outside := newWorkspace(t) // no commit
	r = outside.ralph("loop", "--worktree", "x", "-p", "x")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: the repository has no commit to make the loop's worktree from")
}

func branchExists(t *testing.T, dir, branch string) bool {
	t.Helper()
	return exec.Command("git", "-C", dir, "show-ref", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}

// lockPID is the pid the loop lock of workspace dir names.
func lockPID(t *testing.T, dir string) string {
	t.Helper()
	r := runRalph(t, "status", "-C", dir, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var s struct {
		PID int `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
	return strconv.Itoa(s.PID)
}

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The autopilot's end-to-end tests run the real binary on a real git
// repository, with faithful fakes of tk and bd and the scripted agent,
// which does each task by writing <task>.txt in its worktree and committing
// it, and records when it started and ended.

// taskAgent is the scripted agent's script for a task: record the start,
// take a moment (so that tasks that could overlap would), write the task's
// file, commit, record the end, and claim completion.
func taskAgent(sleep string) agentScript {
	return agentScript{Steps: []step{{
		Sh: `task=$(basename "$PWD"); echo "start $task $(date +%s%N)" >> "$SCRIPTAGENT_STATE/times"; ` +
			`sleep ` + sleep + `; echo "$task" > "$task.txt"; echo "end $task $(date +%s%N)" >> "$SCRIPTAGENT_STATE/times"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}}
}

// newAutopilotRepo is a workspace on branch main with a first commit, a
// ralph.yml whose autopilot section is section; the fake tk and bd are on
// PATH (TestMain puts them there).
func newAutopilotRepo(t testing.TB, section string) *workspace {
	t.Helper()
	w := newWorkspace(t)
	git(t, w.dir, "checkout", "-q", "-b", "main")
	git(t, w.dir, "config", "user.name", "Dev")
	git(t, w.dir, "config", "user.email", "dev@example.com")
	w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 4\n  completion_confirmations: 1\nautopilot:\n"+section)
	w.write("README.md", "a project\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "start")
	return w
}

// run runs a command of the repository's tracker and returns its output.
func (w *workspace) run(name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = w.dir
	out, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "%s %v: %s", name, args, out)
	return strings.TrimSpace(string(out))
}

// interval is when a task's agent ran, in nanoseconds.
type interval struct{ start, end int64 }

func (w *workspace) agentTimes() map[string][]interval {
	w.t.Helper()
	data, err := os.ReadFile(filepath.Join(w.state, "times"))
	require.NoError(w.t, err)
	out := map[string][]interval{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		require.Len(w.t, f, 3, line)
		ns, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(w.t, err)
		runs := out[f[1]]
		if f[0] == "start" {
			out[f[1]] = append(runs, interval{start: ns})
		} else {
			runs[len(runs)-1].end = ns
		}
	}
	return out
}

// mergedOrder lists the tasks merged into main, oldest first, and checks
// that each merge names its task in a Ralph-Task trailer.
func (w *workspace) mergedOrder() []string {
	w.t.Helper()
	var order, trailers []string
	for line := range strings.Lines(git(w.t, w.dir, "log", "--first-parent", "--reverse", "--format=%s", "main")) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ralph: merge "); ok {
			order = append(order, strings.Fields(rest)[0])
		}
	}
	for line := range strings.Lines(git(w.t, w.dir, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Ralph-Task,valueonly)", "main")) {
		if task := strings.TrimSpace(line); task != "" {
			trailers = append(trailers, task)
		}
	}
	assert.Equal(w.t, order, trailers, "each merge names its task in a Ralph-Task trailer")
	return order
}

// assertCleanAfterRun checks what every successful autopilot run leaves:
// the checkout clean, no task worktree or branch, and no merge that
// brought tracker files in from a task branch.
func (w *workspace) assertCleanAfterRun(tracker ...string) {
	t := w.t
	t.Helper()
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")), "the checkout is clean")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "branch", "--list", "ralph/*")), "no task branch is left")
	assert.Len(t, strings.Split(strings.TrimSpace(git(t, w.dir, "worktree", "list")), "\n"), 1, "no task worktree is left")
	entries, err := os.ReadDir(filepath.Join(w.dir, ".worktrees"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only .worktrees/.gitignore is left")
	for line := range strings.Lines(git(t, w.dir, "log", "--first-parent", "--format=%H %s", "main")) {
		hash, subject, _ := strings.Cut(strings.TrimSpace(line), " ")
		if !strings.HasPrefix(subject, "ralph: merge ") {
			continue
		}
		for changed := range strings.Lines(git(t, w.dir, "diff", "--name-only", hash+"^1", hash)) {
			for _, p := range tracker {
				assert.False(t, strings.HasPrefix(strings.TrimSpace(changed), p), "%s brought %s in from a task branch", subject, changed)
			}
		}
	}
}

func TestAutopilotWorksThroughTkTickets(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: tk\n")
	w.script(taskAgent("0.3"))
	id := map[string]string{}
	create := func(name string, args ...string) {
		id[name] = w.run("tk", append([]string{"create", "Task " + name, "-d", "Do " + name}, args...)...)
	}
	create("api1", "-p", "1", "--tags", "component:api")
	create("ui", "-p", "1", "--tags", "component:ui")
	create("api2", "-p", "2", "--tags", "component:api")
	create("docs", "-p", "2")
	create("base", "-p", "3")
	create("after", "-p", "0")
	w.run("tk", "dep", id["after"], id["base"])
	// The new tickets are left uncommitted, as after `tk create`: the
	// autopilot commits its tracker's files itself.

	r := w.ralph("autopilot", "--parallel", "3")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	order := w.mergedOrder()
	assert.ElementsMatch(t, slices.Collect(maps.Values(id)), order, "all six merged")
	assert.Less(t, slices.Index(order, id["base"]), slices.Index(order, id["after"]), "a dependency is merged before the task that waits for it")
	for name, tid := range id {
		assert.Equal(t, tid+"\n", w.read(tid+".txt"), name)
		assert.Contains(t, w.read(".tickets/"+tid+".md"), "status: closed", "%s is closed in tk", name)
	}
	times := w.agentTimes()
	a, b := times[id["api1"]], times[id["api2"]]
	require.Len(t, a, 1)
	require.Len(t, b, 1)
	assert.True(t, a[0].end < b[0].start || b[0].end < a[0].start, "tasks sharing component:api never ran at once: %v %v", a, b)
	assert.Contains(t, r.stderr, "held: "+id["api2"], "the hold is reported")
	w.assertCleanAfterRun(".tickets")
	log := git(t, w.dir, "log", "--format=%s", "main")
	assert.Contains(t, log, "ralph: claim "+id["ui"])
	assert.Len(t, closeCommits(t, w.dir, "main", id["ui"]), 1)
	assert.Contains(t, log, "ralph: record the tracker's changes before the autopilot starts")

	st := readAutopilotState(t, w)
	assert.Len(t, st.Completed, 6)
	assert.Empty(t, st.Failed)
	assert.NotNil(t, st.Ended)
	assert.FileExists(t, filepath.Join(w.dir, ".ralph", runfiles.ProgressFile))
}

func readAutopilotState(t *testing.T, w *workspace) runfiles.AutopilotState {
	t.Helper()
	var st runfiles.AutopilotState
	require.NoError(t, json.Unmarshal([]byte(w.read(".ralph/"+runfiles.AutopilotStateFile)), &st))
	return st
}

// sourceSetup fills a repository with three tasks, one, two and three, in
// one tracker, and says how to tell that a task is closed there.
type sourceSetup struct {
	name    string
	section string
	env     []string
	tracker []string
	setUp   func(w *workspace) (ids []string)
	closed  func(w *workspace, id string) bool
}

func sourceSetups() []sourceSetup {
	beads := func(envelope bool) sourceSetup {
		s := sourceSetup{name: "beads", section: "  source: beads\n", tracker: []string{".beads"},
			setUp: func(w *workspace) []string {
				w.run("bd", "init")
				var ids []string
				for i, title := range []string{"one", "two", "three"} {
					var issue struct{ ID string }
					require.NoError(w.t, json.Unmarshal([]byte(w.run("bd", "create", "Task "+title, "-p", strconv.Itoa(i), "--json")), &issue))
					ids = append(ids, issue.ID)
				}
				return ids
			},
			closed: func(w *workspace, id string) bool {
				return strings.Contains(w.run("bd", "show", id, "--json"), `"status": "closed"`)
			}}
		if envelope {
			s.name, s.env = "beads envelope", []string{"FAKE_BD_ENVELOPE=1"}
		}
		return s
	}
	return []sourceSetup{
		beads(false),
		beads(true),
		{name: "prd", section: "  source: {type: prd, path: prd.json}\n", tracker: []string{"prd.json"},
			setUp: func(w *workspace) []string {
				w.write("prd.json", `{
  "project": "demo",
  "userStories": [
    {"id": "US-002", "title": "Two", "description": "the second", "priority": 2, "passes": false, "acceptanceCriteria": ["it works"]},
    {"id": "US-001", "title": "One", "description": "the first", "priority": 1, "passes": false, "acceptanceCriteria": []},
    {"id": "US-003", "title": "Three", "description": "the third", "priority": 3, "passes": false, "acceptanceCriteria": []}
  ]
}
`)
				return []string{"US-001", "US-002", "US-003"}
			},
			closed: func(w *workspace, id string) bool {
				var prd struct {
					UserStories []struct {
						ID     string
						Passes bool
					}
				}
				require.NoError(w.t, json.Unmarshal([]byte(w.read("prd.json")), &prd))
				for _, s := range prd.UserStories {
					if s.ID == id {
						return s.Passes
					}
				}
				return false
			}},
		{name: "checklist", section: "  source: {type: checklist, path: TODO.md}\n", tracker: []string{"TODO.md"},
			setUp: func(w *workspace) []string {
				w.write("TODO.md", "# Work\n\n- [ ] One\n- [ ] Two\n  - [ ] it has a test\n- [ ] Three\n")
				return []string{"one", "two", "three"}
			},
			closed: func(w *workspace, id string) bool {
				return strings.Contains(w.read("TODO.md"), "- [x] "+strings.ToUpper(id[:1])+id[1:])
			}},
		{name: "command",
			setUp: func(w *workspace) []string {
				dir := filepath.Join(w.state, "tracker")
				require.NoError(w.t, os.MkdirAll(dir, 0o755))
				for i, id := range []string{"c-one", "c-two", "c-three"} {
					line := fmt.Sprintf(`{"id": %q, "title": "Task %s", "priority": %d}`, id, id, i)
					require.NoError(w.t, os.WriteFile(filepath.Join(dir, id+".json"), []byte(line+"\n"), 0o644))
				}
				return []string{"c-one", "c-two", "c-three"}
			},
			closed: func(w *workspace, id string) bool {
				_, err := os.Stat(filepath.Join(w.state, "tracker", "closed-"+id))
				return err == nil
			}},
	}
}

func TestAutopilotWorksWithEverySource(t *testing.T) {
	t.Parallel()
	for _, s := range sourceSetups() {
		t.Run(s.name, func(t *testing.T) {
			section := s.section
			if s.name == "command" {
				section = "" // set below, once the state directory is known
			}
			w := newAutopilotRepo(t, section)
			if s.name == "command" {
				dir := filepath.Join(w.state, "tracker")
				w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 4\n  completion_confirmations: 1\nautopilot:\n"+
					"  source:\n    type: command\n"+
					"    list: for f in "+dir+"/*.json; do id=$(basename \"$f\" .json); [ -e "+dir+"/closed-$id ] || cat \"$f\"; done\n"+
					"    close: touch "+dir+"/closed-$RALPH_TASK_ID\n")
				git(t, w.dir, "commit", "-q", "-am", "a command source")
			}
			w.script(taskAgent("0"))
			ids := s.setUp(w)
			r := w.ralphEnv(s.env, "autopilot", "--parallel", "2")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			order := w.mergedOrder()
			assert.ElementsMatch(t, ids, order)
			for _, id := range ids {
				assert.FileExists(t, filepath.Join(w.dir, id+".txt"))
				assert.True(t, s.closed(w, id), "%s is closed in the tracker", id)
			}
			w.assertCleanAfterRun(s.tracker...)
		})
	}
}

func TestAutopilotRetriesAConflictingTask(t *testing.T) {
	t.Parallel()
	// The second to merge conflicts, and its retry resolves the merge it
	// finds in progress by keeping both lines.
	w := conflictingTasks(t, "  retries: 1\n", keepBoth)
	r := w.ralph("autopilot", "--parallel", "2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "running its loop again on the new base (attempt 2)")
	assert.ElementsMatch(t, []string{"first", "second"}, w.mergedOrder())
	assert.Equal(t, "first\nsecond\n", w.read("shared.txt"))
	assert.Contains(t, w.read("TODO.md"), "- [x] First\n- [x] Second")
	w.assertCleanAfterRun("TODO.md")
}

// conflictAgent does tasks first and second: each rewrites shared.txt
// with its name; first waits until second has committed, so both really
// change the same base and the second to merge (usually first) conflicts.
// resolve is what a retry's agent does with the merge it finds in progress
// (or the markers committed on its branch).
func conflictAgent(resolve string) agentScript {
	return agentScript{Steps: []step{{
		Sh: `task=$(basename "$PWD"); ` +
			`if git rev-parse -q --verify MERGE_HEAD >/dev/null || grep -q '^<<<<<<<' shared.txt; then ` + resolve + `; ` +
			`else echo "$task" > shared.txt; echo "$task" > "$task.txt"; fi; ` +
			`touch "$SCRIPTAGENT_STATE/done-$task"; ` +
			`if [ "$task" = first ]; then while [ ! -e "$SCRIPTAGENT_STATE/done-second" ]; do sleep 0.05; done; fi`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}}
}

// keepBoth is conflictAgent's resolution that keeps both tasks' lines.
const keepBoth = `printf 'first\nsecond\n' > shared.txt`

func TestAutopilotFailedVerificationLeavesTheBaseBranch(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  verify:\n    - {type: command_succeeds, command: \"test ! -e bad.txt\"}\n")
	w.write("TODO.md", "- [ ] Good\n- [ ] Bad\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(taskAgent("0"))
	r := w.ralph("autopilot", "--headless")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	var topics []string
	for line := range strings.Lines(r.stdout) {
		ev, err := events.ParseLine([]byte(strings.TrimSuffix(line, "\n")))
		require.NoError(t, err, "--headless prints one event per line: %q", line)
		topics = append(topics, ev.Topic)
		if ev.Topic == runfiles.TopicTaskFailed {
			assert.Contains(t, ev.PayloadText(), "verification of the merged result failed")
		}
	}
	assert.Contains(t, topics, runfiles.TopicVerifyFailed)
	assert.Equal(t, runfiles.TopicAutopilotStopped, topics[len(topics)-1])
	assert.Equal(t, r.stdout, w.read(".ralph/"+runfiles.AutopilotEventsFile), "the same lines as the log")
	assert.Equal(t, []string{"good"}, w.mergedOrder(), "only the verified task is merged")
	assert.NoFileExists(t, filepath.Join(w.dir, "bad.txt"))
	assert.Contains(t, w.read("TODO.md"), "- [ ] Bad", "a failed task stays open")
	assert.DirExists(t, filepath.Join(w.dir, ".worktrees", "bad"), "its worktree is kept")
	assert.Contains(t, git(t, w.dir, "branch", "--list", "ralph/bad"), "ralph/bad", "its branch is kept")
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")))
	st := readAutopilotState(t, w)
	require.Len(t, st.Failed, 1)
	assert.Equal(t, "bad", st.Failed[0].Task)
}

func TestAutopilotDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: tk\n  parallel: 2\n")
	a := w.run("tk", "create", "Alpha", "-p", "1", "--tags", "component:api")
	b := w.run("tk", "create", "Beta", "-p", "2", "--tags", "component:api")
	c := w.run("tk", "create", "Gamma", "-p", "3")
	d := w.run("tk", "create", "Delta", "-p", "0")
	w.run("tk", "dep", d, c)
	before := snapshot(t, w.dir)
	r := w.ralph("autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, before, snapshot(t, w.dir), "the repository and the tracker are byte for byte as they were")
	assert.Contains(t, r.stdout, a+" (Alpha) [P1]: starts in slot 1")
	assert.Contains(t, r.stdout, b+" (Beta) [P2]: held until "+a)
	assert.Contains(t, r.stdout, c+" (Gamma) [P3]: starts in slot 2")
	assert.Contains(t, r.stdout, d+" (Delta): waits for "+c)
}

// snapshot maps every file under dir, .git included, to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	}))
	return out
}

func TestAutopilotPreconditions(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: tk\n")
	w.write("README.md", "a project, edited\n")
	w.write("untracked.txt", "no task sees it, and it is in no merge's way\n")
	r := w.ralph("autopilot")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: the base branch has uncommitted changes: README.md\n")
	assert.Contains(t, r.stderr, "ralph: hint: commit or stash them first (git stash; untracked files may stay)")
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph"), "nothing changed")

	r = w.ralph("autopilot", "--parallel", "0")
	assert.Equal(t, 3, r.code)
	r = w.ralph("autopilot", "--frobnicate")
	assert.Equal(t, 3, r.code)

	// Every failed precondition is named at once, each with its fix.
	git(t, w.dir, "checkout", "-q", "--detach")
	r = w.ralphEnv([]string{"PATH=" + gitOnlyPath(t)}, "autopilot")
	assert.Equal(t, 3, r.code)
	assert.Equal(t, "ralph: error: the autopilot cannot start, for 3 reasons:\n"+
		"ralph: error: 1. HEAD is detached: the autopilot merges onto the branch checked out here\n"+
		"ralph: error: 2. the base branch has uncommitted changes: README.md\n"+
		"ralph: error: 3. tk is not on PATH: the tk source runs it\n"+
		"ralph: hint: 1. check out the branch to merge into, e.g. git switch main\n"+
		"ralph: hint: 2. commit or stash them first (git stash; untracked files may stay): each task's worktree starts from the base branch's last commit, so no task would see them, and merges land in this checkout\n"+
		"ralph: hint: 3. install tk, or choose another autopilot.source (tk, beads, prd, checklist, command)\n", r.stderr)
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph"), "nothing changed")

	git(t, w.dir, "checkout", "--", "README.md")
	r = w.ralph("autopilot")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: HEAD is detached: the autopilot merges onto the branch checked out here\n"+
		"ralph: hint: check out the branch to merge into, e.g. git switch main\n")
	git(t, w.dir, "checkout", "-q", "-b", "other")
	w.write("base.yml", "autopilot:\n  base_branch: main\n")
	r = w.ralph("autopilot", "-c", "ralph.yml", "-c", "base.yml")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: autopilot.base_branch is main but other is checked out\n"+
		"ralph: hint: check out main (git switch main), or set base_branch: other\n")
	git(t, w.dir, "checkout", "-q", "main")
	outside := t.TempDir()
	r = w.ralph("-C", outside, "autopilot", "-c", filepath.Join(w.dir, "ralph.yml"))
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: "+outside+" is not in a git repository\n"+
		"ralph: hint: the autopilot merges each task's work through git: run it in a repository (git init, and a first commit)\n")

	r = w.ralphEnv([]string{"PATH=/usr/bin:/bin"}, "autopilot")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "tk is not on PATH")
}

// gitOnlyPath is a PATH with git on it, and nothing else.
func gitOnlyPath(t *testing.T) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(gitBin, filepath.Join(dir, "git")))
	return dir
}

// autopilotEvents reads the autopilot's log.
func autopilotEvents(t *testing.T, w *workspace) []events.Event {
	t.Helper()
	recs, err := events.NewReader(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile), 0).Read()
	require.NoError(t, err)
	var out []events.Event
	for _, r := range recs {
		require.NoError(t, r.Err)
		out = append(out, r.Event)
	}
	return out
}

func countTopic(evs []events.Event, topic string) map[string]int {
	n := map[string]int{}
	for _, ev := range evs {
		if ev.Topic == topic {
			var p struct{ Task string }
			_ = json.Unmarshal(ev.Payload, &p)
			n[p.Task]++
		}
	}
	return n
}

// The autopilot is killed with SIGKILL at each named point, then run
// again: it finishes the queue with nothing merged twice, nothing closed
// twice and nothing lost.
func TestAutopilotFinishesTheQueueAfterACrash(t *testing.T) {
	t.Parallel()
	for _, point := range []string{
		autopilot.FaultRunning + ":2",  // two slots active
		autopilot.FaultMerged + ":1",   // a verified merge, the base branch not moved yet
		autopilot.FaultAdvanced + ":1", // merged, not yet closed
		autopilot.FaultClosed + ":1",   // closed, not yet recorded
	} {
		t.Run(point, func(t *testing.T) {
			w := newAutopilotRepo(t, "  source: tk\n  parallel: 2\n")
			w.script(taskAgent("0.2"))
			var ids []string
			for _, name := range []string{"one", "two", "three"} {
				ids = append(ids, w.run("tk", "create", "Task "+name, "-p", "1"))
			}
			killed := w.ralphEnv([]string{crashEnv + "=" + point}, "autopilot")
			require.Equal(t, -1, killed.code, "killed at %s\nstderr:\n%s", point, killed.stderr)

			r := w.ralph("autopilot")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.ElementsMatch(t, ids, w.mergedOrder(), "each task merged exactly once")
			for _, id := range ids {
				ticket := w.read(".tickets/" + id + ".md")
				assert.Contains(t, ticket, "status: closed")
				assert.Equal(t, 1, strings.Count(ticket, "merged into main by ralph autopilot"), "%s closed once:\n%s", id, ticket)
				assert.Len(t, closeCommits(t, w.dir, "main", id), 1, "%s: one close commit", id)
				assert.Equal(t, id+"\n", w.read(id+".txt"))
			}
			evs := autopilotEvents(t, w)
			completed := countTopic(evs, runfiles.TopicTaskCompleted)
			assert.Equal(t, ids, sortedKeysOf(ids, completed), "every task completed")
			for _, id := range ids {
				assert.Equal(t, 1, completed[id], "%s completed once", id)
			}
			assert.Empty(t, countTopic(evs, runfiles.TopicTaskFailed))
			w.assertCleanAfterRun(".tickets")
		})
	}
}

// sortedKeysOf lists the ids that m has, in the order of ids.
func sortedKeysOf(ids []string, m map[string]int) []string {
	var out []string
	for _, id := range ids {
		if m[id] > 0 {
			out = append(out, id)
		}
	}
	return out
}

// waitRelease is the scripted agent's way to hold its loop until the
// test creates $SCRIPTAGENT_STATE/release.
const waitRelease = `while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.05; done; `

// newHeldAutopilot is a repository whose autopilot, started, runs tasks
// one and two of three in two slots, each agent holding its loop until the
// test creates $SCRIPTAGENT_STATE/release.
func newHeldAutopilot(t *testing.T) *workspace {
	t.Helper()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  parallel: 2\n")
	w.write("TODO.md", "- [ ] One\n- [ ] Two\n- [ ] Three\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); touch "$SCRIPTAGENT_STATE/running-$task"; ` + waitRelease + `echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	return w
}

// awaitHeldTasks waits for the agents of tasks one and two to be running.
func awaitHeldTasks(t *testing.T, w *workspace) {
	t.Helper()
	for _, task := range []string{"one", "two"} {
		waitFor(t, task+"'s agent", func() bool { return fileExists(filepath.Join(w.state, "running-"+task)) })
	}
}

func TestAutopilotStatusPauseAndStop(t *testing.T) {
	t.Parallel()
	w := newHeldAutopilot(t)
	cmd, stderr := w.startRalph("autopilot")
	awaitHeldTasks(t, w)

	// Each task started says how to attach to it.
	for _, task := range []string{"one", "two"} {
		assert.Contains(t, stderr.String(), " → .worktrees/"+task+"; watch it with `ralph watch --task "+task+"`\n")
	}

	r := w.ralph("autopilot", "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st runfiles.AutopilotStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.True(t, st.Running)
	assert.Equal(t, 2, st.Started)
	require.Len(t, st.Active, 2)
	assert.Equal(t, "one", st.Active[0].Task)
	assert.Equal(t, ".worktrees/one", st.Active[0].Worktree)
	assert.True(t, st.Active[0].LoopRunning)
	assert.Equal(t, 1, st.Pending, "three is ready and not started")

	// The loop's commands, typed where the autopilot runs, point to its own.
	r = w.ralph("status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "running: no\n")
	assert.Regexp(t, "(?m)^an autopilot runs here \\(run \\S+, pid \\d+, started .*\\): see it with `ralph autopilot status`, stop it with `ralph autopilot stop`", r.stdout)
	r = w.ralph("stop")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: no loop is running in ")
	assert.Contains(t, r.stderr, "ralph: hint: an autopilot runs here (run ")
	assert.Contains(t, r.stderr, "stop it with `ralph autopilot stop` (or `ralph autopilot stop --now`)")

	r = w.ralph("autopilot", "pause")
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, "the pause", func() bool { return strings.Contains(stderr.String(), "paused: no new tasks start") })
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	waitFor(t, "both merges", func() bool { return strings.Count(stderr.String(), "completed: ") == 2 })

	r = w.ralph("autopilot", "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "running (pid")
	assert.Contains(t, r.stdout, "paused")
	assert.Contains(t, r.stdout, "2 started, 2 completed, 0 failed, 1 pending")

	r = w.ralph("autopilot", "stop")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Contains(t, w.read("TODO.md"), "- [ ] Three", "no task starts after a pause and a stop")
	assert.NoFileExists(t, filepath.Join(w.state, "running-three"))

	r = w.ralph("autopilot", "stop")
	assert.Equal(t, 3, r.code, "no autopilot runs any more")
	assert.Contains(t, r.stderr, "no autopilot is running")
	r = w.ralph("status")
	assert.Contains(t, r.stdout, "an autopilot has run here: `ralph autopilot status` shows it")
}

// A task whose agent asks a person waits in its worktree, where nobody
// looks: the autopilot's output, ralph autopilot status (text and JSON)
// and progress.md say which task waits, on what, and the command that
// answers it; that command, typed in the repository, lets the task finish.
func TestAutopilotShowsATaskWaitingForAPerson(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{
		{Sh: `"$RALPH_BIN" ask "Which database?" --option postgres --option sqlite`},
		{Sh: `task=$(basename "$PWD"); echo "$task" > "$task.txt"`, Commit: "do the task", Say: tag("LOOP_COMPLETE", "done")},
	}})
	cmd, stderr := w.startRalph("autopilot")
	waitFor(t, "the autopilot to say the task waits", func() bool { return strings.Contains(stderr.String(), "waits for a person") })
	asked := regexp.MustCompile(`one \(One\) waits for a person: question (q-[0-9a-f]+) from hat ralph: Which database\? \[postgres \| sqlite\]; answer with: (ralph answer --task one q-[0-9a-f]+ "TEXT")`).
		FindStringSubmatch(stderr.String())
	require.NotNil(t, asked, stderr.String())
	id, answer := asked[1], asked[2]
	assert.Contains(t, answer, id)

	r := w.ralph("autopilot", "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st runfiles.AutopilotStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.Len(t, st.Active, 1)
	slot := st.Active[0]
	require.NotNil(t, slot.Waiting, r.stdout)
	assert.Equal(t, id, slot.Waiting.ID)
	assert.Equal(t, "Which database?", slot.Waiting.Text)
	assert.Equal(t, []string{"postgres", "sqlite"}, slot.Waiting.Options)
	assert.Equal(t, answer, slot.AnswerWith)
	text := w.ralph("autopilot", "status")
	require.Equal(t, 0, text.code, text.stderr)
	assert.Contains(t, text.stdout, "slot 1: one (One), ")
	assert.Contains(t, text.stdout, "waiting for a person, in .worktrees/one\n")
	assert.Contains(t, text.stdout, "  asks question "+id+" from hat ralph: Which database? [postgres | sqlite]\n")
	assert.Contains(t, text.stdout, "  answer with: "+answer+"\n")
	progress := w.read(".ralph/progress.md")
	assert.Contains(t, progress, "1 waiting for a person")
	assert.Contains(t, progress, "## Waiting for a person\n\n- one (One) asks ("+id+", hat ralph, ")
	assert.Contains(t, progress, "  - options: postgres | sqlite\n")
	assert.Contains(t, progress, "  - answer with `"+answer+"`\n")

	unanswered := w.ralph("answer", "postgres")
	assert.Equal(t, 3, unanswered.code, "the checkout's own loop asks nothing")
	assert.Contains(t, unanswered.stderr, "the autopilot's tasks wait on: one ("+id+": Which database?)")
	assert.Contains(t, unanswered.stderr, "ralph: hint: answer one's with `"+answer+"`")

	r = w.ralphShell(strings.Replace(strings.Replace(answer, "ralph", `"$RALPH"`, 1), `"TEXT"`, `"postgres, please"`, 1))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "answered "+id+" (Which database?)")
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Contains(t, stderr.String(), "one: question "+id+" no longer waits (answered, or its time ran out); its loop goes on")
	assert.Contains(t, stderr.String(), "completed: one (One)")
	assert.Equal(t, "one\n", w.read("one.txt"))
	assert.NotContains(t, w.read(".ralph/progress.md"), "Waiting for a person")
	evs := autopilotEvents(t, w)
	assert.Equal(t, map[string]int{"one": 1}, countTopic(evs, runfiles.TopicTaskAsked))
	assert.Equal(t, map[string]int{"one": 1}, countTopic(evs, runfiles.TopicTaskAnswered))
}

// conflictingTasks is a checklist of conflictAgent's two tasks, first and
// second, in a repository with shared.txt.
func conflictingTasks(t *testing.T, section, resolve string) *workspace {
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n"+section)
	w.write("shared.txt", "base\n")
	w.write("TODO.md", "- [ ] First\n- [ ] Second\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(conflictAgent(resolve))
	return w
}

// ralphMerges counts, by task, ralph's own merge commits on main: the
// first-parent commits whose subject and Ralph-Task trailer name the task.
func (w *workspace) ralphMerges() map[string]int {
	w.t.Helper()
	n := map[string]int{}
	out := git(w.t, w.dir, "log", "--first-parent", "--format=%s%x00%(trailers:key=Ralph-Task,valueonly,unfold)%x01", "main")
	for record := range strings.SplitSeq(out, "\x01") {
		subject, trailers, ok := strings.Cut(strings.TrimSpace(record), "\x00")
		if !ok {
			continue
		}
		for task := range strings.Lines(trailers) {
			task = strings.TrimSpace(task)
			if task != "" && strings.HasPrefix(subject, "ralph: merge "+task+" (") {
				n[task]++
			}
		}
	}
	return n
}

// markersOnMain lists the conflict markers main's tree holds.
func (w *workspace) markersOnMain() string {
	w.t.Helper()
	cmd := exec.Command("git", "grep", "-n", "-E", "^(<{7}|>{7})( |$)", "main", "--")
	cmd.Dir = w.dir
	out, err := cmd.CombinedOutput()
	if code := exitCodeOf(err); code != 1 {
		require.NoError(w.t, err, "git grep: %s", out)
	}
	return string(out)
}

// A task the tracker refuses to hand out is not started: its event,
// task.assign_failed, carries the error, apart from task.failed of a task
// whose loop failed, and every view and the tracker's note say so; the
// other task runs and merges.
func TestAutopilotReportsATaskItCouldNotStart(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source:\n    type: command\n    list: cat board/*.json\n"+
		"    claim: 'if [ \"$RALPH_TASK_ID\" = c-1 ]; then echo \"c-1 is locked by ops\" >&2; exit 1; fi'\n"+
		"    close: 'true'\n"+
		"    fail: 'printf \"%s: %s\\n\" \"$RALPH_TASK_ID\" \"$RALPH_TASK_REASON\" >> notes.txt'\n"+
		"    files: [notes.txt]\n")
	w.write("board/c-1.json", `{"id": "c-1", "title": "Deploy", "status": "open", "priority": 1}`+"\n")
	w.write("board/c-2.json", `{"id": "c-2", "title": "Docs", "status": "open", "priority": 2}`+"\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the board")
	w.script(taskAgent("0"))

	r := w.ralph("autopilot", "--headless")
	require.Equal(t, 1, r.code, "a task was not started\nstderr:\n%s", r.stderr)
	var failed []events.Event
	for line := range strings.Lines(r.stdout) {
		ev, err := events.ParseLine([]byte(line))
		require.NoError(t, err, line)
		switch ev.Topic {
		case runfiles.TopicTaskAssignFailed:
			failed = append(failed, ev)
		case runfiles.TopicTaskFailed:
			t.Errorf("no loop failed: %s", line)
		}
	}
	require.Len(t, failed, 1, r.stdout)
	p := runfiles.DecodeAutopilotPayload(failed[0])
	assert.Equal(t, "c-1", p.Task)
	assert.Equal(t, "Deploy", p.Title)
	assert.Contains(t, p.Reason, "claiming it in command failed")
	assert.Contains(t, p.Reason, "c-1 is locked by ops", "the event carries the tracker's error")
	assert.ElementsMatch(t, []string{"c-2"}, w.mergedOrder())

	// The plain lines of the same run, taken from its log.
	r = w.ralph("events", "--autopilot", "--topic", "task.assign_failed")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "not started: c-1 (Deploy): claiming it in command failed")
	r = w.ralph("autopilot", "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "1 failed")
	assert.Contains(t, r.stdout, "not started: c-1 (Deploy): claiming it in command failed")
	assert.Contains(t, w.read(".ralph/progress.md"), "not started: c-1 (Deploy): claiming it in command failed")
	assert.Contains(t, w.read("notes.txt"), "c-1: not started: claiming it in command failed", "the tracker's note says no loop ran")
}

// A prd story whose id cannot name a branch is not started, and the
// story's notes say why, as every failure's do; the valid one runs.
func TestAutopilotNotesAPrdStoryWithAnInvalidID(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: prd, path: prd.json}\n")
	w.write("prd.json", `{"project": "demo", "userStories": [
  {"id": "US 1", "title": "Spaced", "priority": 1, "passes": false},
  {"id": "US-2", "title": "Fine", "priority": 2, "passes": false}
]}
`)
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the prd")
	w.script(taskAgent("0"))

	r := w.ralph("autopilot")
	require.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, `not started: US 1 (Spaced): the task id "US 1" cannot name a worktree or a branch`)
	var prd struct {
		UserStories []struct {
			ID, Notes string
			Passes    bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(w.read("prd.json")), &prd))
	require.Len(t, prd.UserStories, 2)
	assert.Contains(t, prd.UserStories[0].Notes, `ralph: failed: not started: the task id "US 1" cannot name`)
	assert.False(t, prd.UserStories[0].Passes)
	assert.True(t, prd.UserStories[1].Passes, "the valid story ran and merged")
	assert.Contains(t, git(t, w.dir, "log", "--format=%s", "main"), "ralph: US 1 failed", "the note is committed")
}

// beads' dry run lists the issues blocked by an open one, as tk's does.
func TestAutopilotDryRunListsBeadsBlockedIssues(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: beads\n")
	w.run("bd", "init")
	id := func(title string) string {
		var issue struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(w.run("bd", "create", title, "-p", "1", "--json")), &issue))
		return issue.ID
	}
	schema, docs := id("Schema"), id("Docs")
	w.run("bd", "dep", "add", docs, schema)
	r := w.ralph("autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, schema+" (Schema) [P1]: starts in slot 1")
	assert.Contains(t, r.stdout, "blocked by dependencies (1):\n")
	assert.Contains(t, r.stdout, docs+" (Docs): waits for "+schema)
}

// The dry run checks what the run checks before it starts, and says what
// would stop it, after the plan; the autopilot's own config, edited and
// not committed, stops neither.
func TestAutopilotDryRunChecksWhatTheRunChecks(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n")
	w.write("TODO.md", "- [ ] One\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.write("README.md", "a project, edited\n")
	git(t, w.dir, "checkout", "-q", "--detach")
	before := snapshot(t, w.dir)
	r := w.ralph("autopilot", "--dry-run")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stdout, "one (One) [P0]: starts in slot 1", "the plan is printed all the same")
	assert.Contains(t, r.stderr, "ralph: the run would not start:\n"+
		"ralph: error: the autopilot cannot start, for 2 reasons:\n"+
		"ralph: error: 1. HEAD is detached: the autopilot merges onto the branch checked out here\n"+
		"ralph: error: 2. the base branch has uncommitted changes: README.md\n")
	assert.Contains(t, r.stderr, "ralph: hint: 1. check out the branch to merge into")
	assert.Equal(t, before, snapshot(t, w.dir), "the dry run changes nothing")

	git(t, w.dir, "checkout", "-q", "--", "README.md")
	git(t, w.dir, "checkout", "-q", "main")
	w.write("ralph.yml", w.read("ralph.yml")+"# tuned, not committed yet\n")
	r = w.ralph("autopilot", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	w.script(taskAgent("0"))
	r = w.ralph("autopilot")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"one"}, w.mergedOrder())
	assert.Contains(t, w.read("ralph.yml"), "# tuned, not committed yet", "the edit is left as it was")
}

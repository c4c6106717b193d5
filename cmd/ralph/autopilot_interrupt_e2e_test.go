//go:build unix

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// The autopilot through ordinary interruptions: whatever stops a run, the
// next one finishes the queue, and every run leaves the same invariants
// (assertConverged).

// assertConverged checks what every autopilot run that finished its queue
// leaves, however earlier runs were cut off: each task merged exactly once
// by ralph, no conflict marker on main, each task closed in its tracker,
// no task worktree or branch, the checkout clean.
func (w *workspace) assertConverged(ids []string, closed func(id string) bool, tracker ...string) {
	t := w.t
	t.Helper()
	merges := w.ralphMerges()
	for _, id := range ids {
		assert.Equal(t, 1, merges[id], "%s is merged exactly once", id)
		assert.True(t, closed(id), "%s is closed in the tracker", id)
	}
	assert.Len(t, merges, len(ids), "nothing else is merged: %v", merges)
	assert.Empty(t, w.markersOnMain(), "no conflict marker reaches main")
	w.assertCleanAfterRun(tracker...)
}

func checklistClosed(w *workspace) func(string) bool {
	return func(id string) bool {
		return strings.Contains(w.read("TODO.md"), "- [x] "+strings.ToUpper(id[:1])+id[1:])
	}
}

// Every way a person or a machine stops an autopilot while its loops run:
// the next `ralph autopilot` resumes each cut-off loop where it stopped and
// finishes the queue.
func TestAutopilotResumesLoopsCutOffByAnyInterruption(t *testing.T) {
	t.Parallel()
	for _, stop := range []struct {
		name string
		code int
		do   func(w *workspace, cmd *exec.Cmd)
	}{
		{"SIGINT", exitcode.Interrupted, func(_ *workspace, cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGINT) }},
		{"SIGTERM", exitcode.Interrupted, func(_ *workspace, cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }},
		{"stop --now", exitcode.Interrupted, func(w *workspace, _ *exec.Cmd) {
			r := w.ralph("autopilot", "stop", "--now")
			require.Equal(w.t, 0, r.code, r.stderr)
		}},
		{"reboot", -1, func(_ *workspace, cmd *exec.Cmd) { killTree(cmd.Process.Pid) }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			w := newHeldAutopilot(t)
			cmd, stderr := w.startRalph("autopilot")
			awaitHeldTasks(t, w)
			stop.do(w, cmd)
			require.Equal(t, stop.code, exitCodeOf(cmd.Wait()), stderr.String())

			require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
			r := w.ralph("autopilot")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.NotContains(t, r.stderr, "failed:")
			for _, task := range []string{"one", "two"} {
				loop := w.read(".ralph/autopilot/" + task + "/loop.log")
				assert.Regexp(t, `run \S+ resumed;`, loop, "%s's loop goes on with its run", task)
				assert.Equal(t, 1, strings.Count(loop, " started; "), "%s's loop began one run:\n%s", task, loop)
			}
			w.assertConverged([]string{"one", "two", "three"}, checklistClosed(w), "TODO.md")
		})
	}
}

// killTree kills pid and every process under it at once, as a power cut
// would.
func killTree(pid int) {
	for _, p := range append(descendants(pid), pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// descendants lists the processes under pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The parent is the second field after the command's ")".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			if parent, err := strconv.Atoi(fields[1]); err == nil {
				children[parent] = append(children[parent], child)
			}
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// tkWrapper puts a tk before the fake one on PATH whose close fails while
// $SCRIPTAGENT_STATE/tk-down exists, as a tracker that is down or busy.
func tkWrapper(t *testing.T, w *workspace) {
	t.Helper()
	real, err := exec.LookPath("tk")
	require.NoError(t, err)
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = close ] && [ -e %q ]; then echo 'tk: the tickets are locked by another tk' >&2; exit 1; fi\nexec %q \"$@\"\n",
		filepath.Join(w.state, "tk-down"), real)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tk"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A task merged while its tracker was down is closed by the next run, and
// neither run nor merged again.
func TestAutopilotRetriesOnlyTheCloseOfAMergedTask(t *testing.T) {
	w := newAutopilotRepo(t, "  source: tk\n")
	tkWrapper(t, w)
	w.script(agentScript{Steps: []step{{
		Sh:     `echo "$(basename "$PWD") was here" >> log.txt; echo run >> "$SCRIPTAGENT_STATE/agent-runs"`,
		Commit: "append to the log",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	id := w.run("tk", "create", "Append a line", "-p", "1")
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "tk-down"), nil, 0o644))

	r := w.ralph("autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "closing it in tk failed")
	assert.Contains(t, r.stderr, "still open in the tracker, closed by the next run")
	assert.NotContains(t, w.read(".tickets/"+id+".md"), "status: closed")

	require.NoError(t, os.Remove(filepath.Join(w.state, "tk-down")))
	for range 2 { // the run that closes it, and one after
		r = w.ralph("autopilot")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	assert.Equal(t, "run\n", readFile(t, filepath.Join(w.state, "agent-runs")), "the task ran once")
	assert.Equal(t, id+" was here\n", w.read("log.txt"), "its work landed once")
	assert.Len(t, closeCommits(t, w.dir, "main", id), 1)
	evs := autopilotEvents(t, w)
	assert.Equal(t, map[string]int{id: 1}, countTopic(evs, runfiles.TopicTaskClosed))
	w.assertConverged([]string{id}, func(id string) bool {
		return strings.Contains(w.read(".tickets/"+id+".md"), "status: closed")
	}, ".tickets")
}

// A Ctrl-C that arrives between a merge and its close does not stop the
// merge from landing: the task is closed and cleaned up, the run exits 130,
// and every later run finds nothing left to do.
func TestAutopilotLandsAMergeThroughAnInterrupt(t *testing.T) {
	t.Parallel()
	for _, point := range []string{autopilot.FaultMerged, autopilot.FaultAdvanced} {
		t.Run(point, func(t *testing.T) {
			w := newAutopilotRepo(t, "  source: tk\n")
			w.script(taskAgent("0"))
			id := w.run("tk", "create", "Task one", "-p", "1")
			r := w.ralphEnv([]string{interruptEnv + "=" + point + ":1"}, "autopilot")
			require.Equal(t, exitcode.Interrupted, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, "completed: "+id)
			assert.Contains(t, w.read(".tickets/"+id+".md"), "status: closed", "closed before the run ended")
			for range 2 {
				r = w.ralph("autopilot")
				require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				assert.NotContains(t, r.stderr, "failed:")
			}
			w.assertConverged([]string{id}, func(id string) bool {
				return strings.Contains(w.read(".tickets/"+id+".md"), "status: closed")
			}, ".tickets")
		})
	}
}

// loopOutputs is what each task's loop printed, for a failure's message.
func (w *workspace) loopOutputs() string {
	var b strings.Builder
	paths, _ := filepath.Glob(filepath.Join(w.dir, ".ralph", "autopilot", "*", "loop.log"))
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "== %s\n%s", p, data)
	}
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// An agent that copies ralph's trailer into its own commit, naming another
// task, does not make the autopilot take that task as merged: in every
// merge mode both tasks land.
func TestAutopilotTrustsOnlyItsOwnMergeCommits(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"merge", "squash", "rebase"} {
		t.Run(mode, func(t *testing.T) {
			w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  merge: "+mode+"\n")
			w.write("TODO.md", "- [ ] Alpha\n- [ ] Beta\n")
			git(t, w.dir, "add", "-A")
			git(t, w.dir, "commit", "-q", "-m", "tasks")
			w.script(agentScript{Steps: []step{{
				Sh:     `task=$(basename "$PWD"); echo "$task" > "$task.txt"`,
				Commit: "ralph: merge beta (Beta)\n\nRalph-Task: beta",
				Say:    `<event topic="LOOP_COMPLETE">done</event>`,
			}}})
			r := w.ralph("autopilot")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.NotContains(t, r.stderr, "already merged")
			assert.Equal(t, "alpha\n", w.read("alpha.txt"))
			assert.Equal(t, "beta\n", w.read("beta.txt"), "beta's own work landed")
			w.assertConverged([]string{"alpha", "beta"}, checklistClosed(w), "TODO.md")
		})
	}
}

// An agent that commits a conflicted merge as it found it gets its work
// sent back while retries remain, and fails the task when none is left:
// the markers never reach main.
func TestAutopilotNeverMergesConflictMarkers(t *testing.T) {
	t.Parallel()
	// The retry's agent does nothing with the conflict; the loop's commit
	// takes the files, markers and all.
	w := conflictingTasks(t, "  retries: 2\n", `true`)
	r := w.ralph("autopilot", "--parallel", "2")
	require.Equal(t, exitcode.Failure, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "conflict markers left in shared.txt:")
	// Usually second lands first (first's agent waits for it to commit);
	// the other is the one that conflicts.
	landed, other := "second", "first"
	if w.ralphMerges()["first"] == 1 {
		landed, other = other, landed
	}
	title := strings.ToUpper(other[:1]) + other[1:]
	assert.Contains(t, r.stderr, "failed: "+other+" ("+title+"): its work still holds conflict markers at shared.txt:")
	assert.Empty(t, w.markersOnMain())
	assert.Equal(t, map[string]int{landed: 1}, w.ralphMerges())
	assert.Equal(t, landed+"\n", w.read("shared.txt"))
	assert.Contains(t, w.read("TODO.md"), "- [ ] "+title, "the failed task stays open")
	evs := autopilotEvents(t, w)
	assert.Equal(t, 2, countTopic(evs, runfiles.TopicTaskRetry)[other], "sent back while retries remained")
}

// With merge: rebase, a task whose merge conflicts is retried and lands:
// its retry merged main into its branch, which a replay would drop; the
// history stays linear.
func TestAutopilotRebaseModeRetriesAConflict(t *testing.T) {
	t.Parallel()
	w := conflictingTasks(t, "  merge: rebase\n  retries: 1\n", keepBoth)
	r := w.ralph("autopilot", "--parallel", "2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "running its loop again on the new base (attempt 2)")
	assert.Equal(t, "first\nsecond\n", w.read("shared.txt"))
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "rev-list", "--merges", "main")), "no merge commit on main")
	w.assertConverged([]string{"first", "second"}, checklistClosed(w), "TODO.md")
}

// chaosStop is one way a run of the autopilot ends before its queue does.
type chaosStop struct {
	name string
	do   func(w *workspace, cmd *exec.Cmd)
}

var chaosStops = []chaosStop{
	// A terminal's Ctrl-C reaches the autopilot's whole process group: the
	// git or tracker command it is running too, unless ralph keeps them out.
	{"Ctrl-C", func(_ *workspace, cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }},
	{"SIGTERM", func(_ *workspace, cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }},
	{"stop --now", func(w *workspace, _ *exec.Cmd) { w.ralph("autopilot", "stop", "--now") }},
	{"SIGKILL", func(_ *workspace, cmd *exec.Cmd) { _ = cmd.Process.Kill() }},
	{"SIGKILL to its process group", func(_ *workspace, cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }},
	{"reboot", func(_ *workspace, cmd *exec.Cmd) { killTree(cmd.Process.Pid) }},
}

// The autopilot is stopped at random moments, each time in one of the
// ways above, over several runs; then one run goes to the end. Whatever
// came in between, the invariants hold. The moments are counted in lines
// of the autopilot's log, so each stop comes at a step of the run, not
// after a time that a busy machine stretches. RALPH_CHAOS_SEED replays a
// failure.
func TestAutopilotThroughChaos(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	if s := os.Getenv("RALPH_CHAOS_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("RALPH_CHAOS_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0)) //nolint:gosec // a test's choices

	// Three tasks conflict in turn, and a merge may be made again after a
	// stop: retries enough that no task runs out of them.
	w := newAutopilotRepo(t, "  source: tk\n  parallel: 2\n  retries: 8\n")
	w.write("shared.txt", "base\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "a shared file")
	// Tasks titled "shared …" append to shared.txt, so they conflict with
	// each other; a retry keeps both sides' lines.
	w.script(agentScript{Steps: []step{{
		Sh: `task=$(basename "$PWD"); ` +
			`if git rev-parse -q --verify MERGE_HEAD >/dev/null || grep -q '^<<<<<<<' shared.txt; then ` +
			`sed -i '/^\(<<<<<<<\|=======\|>>>>>>>\)/d' shared.txt; ` +
			`else echo "$task" > "$task.txt"; case "$(cat "$SCRIPTAGENT_STATE/shared-$task" 2>/dev/null)" in yes) echo "$task" >> shared.txt;; esac; fi; ` +
			`sleep 0.1`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	var ids []string
	for i, name := range []string{"shared one", "alpha", "shared two", "beta", "shared three", "gamma"} {
		id := w.run("tk", "create", "Task "+name, "-p", strconv.Itoa(i%3))
		if strings.HasPrefix(name, "shared") {
			require.NoError(t, os.WriteFile(filepath.Join(w.state, "shared-"+id), []byte("yes\n"), 0o644))
		}
		ids = append(ids, id)
	}

	log := filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile)
	for run := 1; run <= 6; run++ {
		stop := chaosStops[rng.IntN(len(chaosStops))]
		lines := countLines(log) + 1 + rng.IntN(30)
		cmd := exec.Command(ralphBin, "autopilot")
		cmd.Dir = w.dir
		cmd.Env = append(os.Environ(), scriptEnv(w.state)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out := &lockedWriter{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		ended := make(chan int, 1)
		go func() { ended <- exitCodeOf(cmd.Wait()) }()
		code, stopped := awaitLinesOrExit(t, log, lines, ended)
		if !stopped {
			stop.do(w, cmd)
			code = <-ended
		}
		t.Logf("run %d: %s at line %d: exit %d", run, stop.name, lines, code)
		require.Contains(t, []int{0, exitcode.Interrupted, -1}, code, "run %d (%s):\n%s\nthe autopilot's log:\n%s\nthe loops' output:\n%s",
			run, stop.name, out.String(), readFile(t, log), w.loopOutputs())
	}
	// What the last stop left running (SIGKILL leaves loops behind, which
	// the next run re-attaches to) is left to the clean run.
	r := w.ralph("autopilot")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s\nthe autopilot's log:\n%s\nthe loops' output:\n%s",
		r.stdout, r.stderr, readFile(t, log), w.loopOutputs())
	assert.Empty(t, countTopic(autopilotEvents(t, w), runfiles.TopicTaskFailed), "no task failed in any run")
	w.assertConverged(ids, func(id string) bool {
		return strings.Contains(w.read(".tickets/"+id+".md"), "status: closed")
	}, ".tickets")
	for _, id := range ids {
		assert.Equal(t, id+"\n", w.read(id+".txt"))
	}
}

// awaitLinesOrExit waits until the log at path has n lines, or the process
// whose exit code ended delivers has exited; stopped says which.
func awaitLinesOrExit(t *testing.T, path string, n int, ended <-chan int) (code int, stopped bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for countLines(path) < n {
		select {
		case code := <-ended:
			return code, true
		case <-time.After(10 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "the autopilot's log did not reach %d lines", n)
	}
	return 0, false
}

func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "\n")
}

// An agent's git killed half-way through a commit (a machine that went
// down) leaves .git/index.lock; the next start removes it, since nothing
// holds it, and the agent's commits go through again.
func TestALoopClearsAStaleIndexLock(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("telling a stale lock needs /proc")
	}
	w := newAutopilotRepo(t, "  source: tk\n")
	w.script(agentScript{Steps: []step{{
		Write:  map[string]string{"done.txt": "done\n"},
		Commit: "the work",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	lock := filepath.Join(w.dir, ".git", "index.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	r := w.ralph("loop", "-p", "write done.txt and commit it")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "removed "+lock+", left by a git process that was killed")
	assert.NoFileExists(t, lock)
	assert.Contains(t, git(t, w.dir, "log", "--format=%s", "-1"), "the work")
}

// The locks a commit takes, left during the run (the agent's git killed
// at the iteration's time limit, say), are cleared before the next agent
// starts, not only when a run starts: otherwise every later commit fails
// until a person steps in. A git killed while it moves the branch leaves
// the branch's ref locked, not the index.
func TestALoopClearsTheCommitLocksLeftDuringTheRun(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("telling a stale lock needs /proc")
	}
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 3\n  completion_confirmations: 1\n")
	w.write("README", "start\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-qm", "start")
	branch := strings.TrimSpace(git(t, w.dir, "symbolic-ref", "HEAD"))
	locks := []string{filepath.Join(w.dir, ".git", "index.lock"), filepath.Join(w.dir, ".git", filepath.FromSlash(branch)+".lock")}
	w.script(agentScript{Steps: []step{
		{Sh: `: > "` + locks[0] + `"; : > "` + locks[1] + `"`, Exit: 1},
		{Write: map[string]string{"done.txt": "done\n"}, Commit: "the work", Say: `<event topic="LOOP_COMPLETE">done</event>`},
	}})
	r := w.ralph("loop", "-p", "write done.txt and commit it")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, lock := range locks {
		assert.Contains(t, r.stderr, "removed "+lock+", left by a git process that was killed")
	}
	assert.Contains(t, git(t, w.dir, "log", "--format=%s", "-1"), "the work")
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
)

// The tests of `ralph watch` run a loop or an autopilot with the scripted
// agent, whose steps wait for a file the test creates, so the run is at a
// known point while `ralph watch` shows it in a tmux session of 80×24.

// waitingBuilder is headlessScript with a builder that prints its tools
// and text, then waits for release before it reports build.done.
func waitingBuilder(t *testing.T, w *workspace) agentScript {
	sc := headlessScript()
	turn := claudeTurn{
		tools: []claudeToolUse{
			{"Read", map[string]string{"file_path": "README.md"}},
			{"Write", map[string]string{"file_path": "hello.txt"}},
			{"Bash", map[string]string{"command": "cat hello.txt"}},
		},
		text: "Wrote hello.txt.", result: "Wrote hello.txt.", in: 1200, out: 300, cost: 0.0123,
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "builder-turn.jsonl"), []byte(turn.String()+"\n"), 0o644))
	sc.ByHat["builder"] = []step{{Write: map[string]string{"hello.txt": "hello\n"},
		Sh: `cat "$SCRIPTAGENT_STATE/builder-turn.jsonl"; touch "$SCRIPTAGENT_STATE/builder-working"; ` +
			`while [ ! -e "$SCRIPTAGENT_STATE/release" ]; do sleep 0.05; done`,
		Emit: []scriptEmit{{Topic: "build.done", Payload: "wrote hello.txt"}}}}
	return sc
}

// watchShell runs ralph watch in dir, then says how it ended.
func watchShell(dir string, args ...string) string {
	return fmt.Sprintf("cd %q && %q watch %s; echo WATCH-EXIT=$?; sleep 120", dir, ralphBin, strings.Join(args, " "))
}

// maskScreen takes out of a captured screen what changes from run to run:
// clocks, durations, run ids, the temporary directory and blank line ends.
func maskScreen(screen, dir string) string {
	for _, m := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(regexp.QuoteMeta(dir)), "$DIR"},
		{regexp.MustCompile(`\d{8}-\d{6}(-[0-9a-f]{6})?`), "RUN-ID"},
		{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "HH:MM:SS"},
		{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ms|s)\b`), "Ns"},
		{regexp.MustCompile(`\bpid \d+`), "pid N"},
		{regexp.MustCompile(`offset \d+`), "offset N"},
		// A title's rule is as long as the clock in it leaves it.
		{regexp.MustCompile(`(?m)^(── .*·.*) ─+$`), "$1 ───"},
	} {
		screen = m.re.ReplaceAllString(screen, m.with)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// ruleOf matches the rule above a pane on a screen width columns wide.
func ruleOf(title string, width int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^── %s ─{%d}$`, regexp.QuoteMeta(title), width-1-len([]rune(title))-4))
}

// assertFits checks that a screen has at most height lines of at most
// width columns.
func assertFits(t *testing.T, screen string, width, height int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	assert.LessOrEqual(t, len(lines), height, "the screen has at most %d lines", height)
	for _, l := range lines {
		assert.LessOrEqual(t, len([]rune(l)), width, "a line fits in %d columns: %q", width, l)
	}
}

func TestWatchALoop(t *testing.T) {
	t.Parallel()
	tm := newTmux(t)
	w := newWorkspace(t)
	w.write("ralph.yml", headlessConfig+claudeCLI())
	w.script(waitingBuilder(t, w))
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the builder at work", func() bool { return fileExists(filepath.Join(w.state, "builder-working")) })

	ts := tm.session("watch", 80, 24, nil, watchShell(w.dir))
	ts.waitFor("| Wrote hello.txt.")
	// The usage comes with the agent's result, its last line.
	screen := ts.waitFor("tokens 2.1k (1.7k in, 380 out) · reads 1 · writes 1 · shell 1")
	t.Logf("attached:\n%s", screen)
	assertFits(t, screen, 80, 24)
	golden.Assert(t, "testdata/watch/loop-attached.golden", maskScreen(screen, w.dir))

	// Three events up is the coordinator's iteration.finished; its
	// payload opens full-screen.
	ts.keys("Up")
	ts.waitFor("events (f follows)")
	ts.keys("k", "k", "Enter")
	screen = ts.waitFor("esc closes")
	t.Logf("a payload:\n%s", screen)
	assert.Contains(t, screen, "── event iteration.finished · offset")
	assert.Contains(t, screen, `"outcome": "success",`)
	assert.Contains(t, screen, `"input_tokens": 500,`)
	ts.keys("Escape")
	ts.waitFor("events (f follows)")
	ts.keys("f")
	ts.waitFor("events (following)")

	ts.keys("p")
	ts.waitFor("a lone loop cannot pause: s stops it")

	// Resized, it redraws to the new size, and back.
	ts.resize(100, 30)
	screen = ts.waitForMatch(ruleOf("agent activity", 100))
	assertFits(t, screen, 100, 30)
	assert.Len(t, []rune(nonBlankLines(screen)[0]), 99, "the header spans the new width but its last column")
	ts.resize(80, 24)
	screen = ts.waitForMatch(ruleOf("agent activity", 80))
	assertFits(t, screen, 80, 24)

	// A second watcher beside the first; the first quits; the run did
	// not notice either. A third on a dumb terminal prints lines.
	again := tm.session("again", 80, 24, nil, watchShell(w.dir))
	again.waitFor("| Wrote hello.txt.")
	ts.keys("q")
	ts.waitFor("WATCH-EXIT=0")
	// (tmux sets TERM in its panes itself.)
	dumb := tm.session("dumb", 160, 60, nil, strings.Replace(watchShell(w.dir), " && ", " && TERM=dumb ", 1))
	screen = dumb.waitFor("iteration.started")
	assert.Contains(t, screen, "iteration 2/10 · builder (claude) · working")
	assert.Contains(t, screen, "TIME", "the events' table, as ralph events prints it")

	// s, s stops the loop, as ralph stop does.
	again.keys("s")
	again.waitFor("press s again to stop")
	again.keys("s")
	again.waitFor("asked the loop to stop before its next iteration")
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	screen = again.waitFor("ended: stopped (exit 1)")
	t.Logf("stopped:\n%s", screen)
	golden.Assert(t, "testdata/watch/loop-stopped.golden", maskScreen(screen, w.dir))
	assert.Equal(t, 1, exitCodeOf(loop.Wait()), stderr.String())
	var reason string
	for _, rec := range w.events() {
		if rec.Event.Topic == "loop.terminate" {
			reason = string(rec.Event.Payload)
		}
	}
	assert.Contains(t, reason, `"reason":"stopped"`)
	screen = dumb.waitFor("waiting for the next one")
	assert.Contains(t, screen, "loop.terminate", "the lines follow the run to its end, as ralph events -f does")
	dumb.keys("C-c")
	dumb.waitFor("WATCH-EXIT=0")
}

func TestWatchAThreeSlotAutopilot(t *testing.T) {
	t.Parallel()
	tm := newTmux(t)
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  parallel: 3\n")
	w.write("TODO.md", "- [ ] One\n- [ ] Two\n- [ ] Three\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{
		Sh: `task=$(basename "$PWD"); echo "working on $task"; touch "$SCRIPTAGENT_STATE/running-$task"; ` +
			waitRelease + `echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	cmd, stderr := w.startRalph("autopilot")
	for _, task := range []string{"one", "two", "three"} {
		waitFor(t, task+"'s agent", func() bool { return fileExists(filepath.Join(w.state, "running-"+task)) })
	}

	ts := tm.session("watch", 80, 24, nil, watchShell(w.dir))
	ts.waitFor("3 started")
	screen := ts.waitFor("| working on one")
	t.Logf("attached:\n%s", screen)
	assertFits(t, screen, 80, 24)
	golden.Assert(t, "testdata/watch/autopilot-attached.golden", maskAutopilotScreen(screen, w.dir))

	ts.keys("Tab")
	screen = ts.waitFor("| working on two")
	assert.Contains(t, screen, "> slot 2  two")
	golden.Assert(t, "testdata/watch/autopilot-slot-2.golden", maskAutopilotScreen(screen, w.dir))
	ts.keys("Tab")
	ts.waitFor("| working on three")
	ts.keys("Tab")
	screen = ts.waitFor("| working on one")
	assert.Contains(t, screen, "> slot 1  one", "Tab goes round")
	ts.keys("BTab")
	ts.waitFor("| working on three")

	// p pauses the autopilot and p resumes it, as ralph autopilot
	// pause|resume do.
	ts.keys("p")
	ts.waitFor("asked the autopilot to pause")
	ts.waitFor("· paused ·")
	waitFor(t, "autopilot.paused", func() bool { return autopilotLogHas(t, w, runfiles.TopicAutopilotPaused) })
	ts.keys("p")
	ts.waitFor("asked the autopilot to resume")
	ts.waitFor("· running ·")
	waitFor(t, "autopilot.resumed", func() bool { return autopilotLogHas(t, w, runfiles.TopicAutopilotResumed) })

	// Quit, and attach again to one task's slot.
	ts.keys("q")
	ts.waitFor("WATCH-EXIT=0")
	again := tm.session("again", 80, 24, nil, watchShell(w.dir, "--task", "two"))
	screen = again.waitFor("| working on two")
	assert.Contains(t, screen, "> slot 2  two")

	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	screen = again.waitFor("ended: all done (exit 0)")
	t.Logf("ended:\n%s", screen)
	// The tasks end and merge in whichever order they do: the autopilot's
	// events below its header are not the same twice.
	header := strings.SplitAfterN(maskAutopilotScreen(screen, w.dir), "\n", 6)
	golden.Assert(t, "testdata/watch/autopilot-ended.golden", strings.Join(header[:5], ""))
	assert.Regexp(t, `all\.done +all done: 3 tasks completed, 0 tasks failed`, screen)
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())

	// Without a terminal, the same as lines, and the autopilot's events
	// until its end, which has come: --once exits there.
	r := runRalph(t, "-C", w.dir, "watch", "--once")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "ralph autopilot · run")
	assert.Contains(t, r.stdout, "ended: all done (exit 0)")
	assert.Contains(t, r.stdout, "autopilot.stopped")
}

// autopilotLogHas says whether the autopilot's log has a line of topic.
func autopilotLogHas(t *testing.T, w *workspace, topic string) bool {
	recs, err := events.NewReader(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile), 0).Read()
	require.NoError(t, err)
	for _, r := range recs {
		if r.Event.Topic == topic {
			return true
		}
	}
	return false
}

// maskAutopilotScreen is maskScreen, and the autopilot's last event,
// which is whichever slot's loop started last.
// The slots' agents are confined with what this machine has (auto): the
// screen says which, and the golden says MODE.
func maskAutopilotScreen(screen, dir string) string {
	screen = maskScreen(screen, dir)
	screen = regexp.MustCompile(`sandbox (landlock|bwrap|seatbelt|off)`).ReplaceAllString(screen, "sandbox MODE")
	return regexp.MustCompile(`(?m)^ last         task\.running.*$`).ReplaceAllString(screen, " last         task.running (the slot that started last)")
}

func TestWatchAnswersAQuestion(t *testing.T) {
	t.Parallel()
	tm := newTmux(t)
	w := newWorkspace(t)
	w.askWorkspace("", "")
	loop, stderr := w.startRalph("loop")
	waitForQuestion(t, stderr)

	ts := tm.session("watch", 80, 24, nil, watchShell(w.dir))
	screen := ts.waitFor("the loop waits for an answer: press a to answer")
	assert.Contains(t, screen, "waiting for an answer: Which database?")
	ts.keys("a")
	screen = ts.waitFor("answer: █")
	t.Logf("answering:\n%s", screen)
	assert.Contains(t, screen, "   2) sqlite")
	ts.keys("2", "Enter")
	ts.waitFor(": sqlite")
	require.NoError(t, loop.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), "answered by watch: sqlite", "a number picks that option")
	assert.Contains(t, w.prompt(3), `"answer": "sqlite"`)
}

// Plain ralph watch (stdout a pipe) started after a run ended shows that
// run, then waits: it follows the next run, in a new log, and the resume
// of that one, in the same log, until it is interrupted.
func TestWatchPlainFollowsTheNextRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", "event_loop:\n  prompt: Do it.\n  max_iterations: 2\n"+agentCLI())
	w.script(agentScript{Steps: []step{{Sh: `if [ -e "$SCRIPTAGENT_STATE/hold" ]; then touch "$SCRIPTAGENT_STATE/working"; ` +
		waitRelease + `fi`}}})
	first := w.ralph("loop")
	require.Equal(t, 2, first.code, first.stderr)
	firstLog := strings.TrimSpace(w.read(".ralph/current-events"))

	once := w.ralph("watch", "--once")
	require.Equal(t, 0, once.code, once.stderr)
	assert.Contains(t, once.stdout, "loop.terminate", "--once prints the ended run and exits")
	assert.NotContains(t, once.stdout, "waiting for the next one")

	watch := exec.Command(ralphBin, "watch")
	watch.Dir = w.dir
	lines := &lockedWriter{}
	watch.Stdout, watch.Stderr = lines, lines
	require.NoError(t, watch.Start())
	t.Cleanup(func() { _ = watch.Process.Kill(); _ = watch.Wait() })
	waitings := func(n int) func() bool {
		return func() bool { return strings.Count(lines.String(), "waiting for the next one") == n }
	}
	waitFor(t, "the watcher to wait after the ended run", waitings(1))
	assert.Contains(t, lines.String(), "loop.terminate")

	// A new run, in a new log.
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "hold"), nil, 0o644))
	loop, stderr := w.startRalph("loop")
	waitFor(t, "the second run's agent", func() bool { return fileExists(filepath.Join(w.state, "working")) })
	secondLog := strings.TrimSpace(w.read(".ralph/current-events"))
	require.NotEqual(t, firstLog, secondLog)
	waitFor(t, "the watcher to follow the second run", func() bool {
		out := lines.String()
		next := strings.Index(out, "the next run, in "+filepath.Base(secondLog))
		return next > 0 && strings.Contains(out[next:], "iteration.started")
	})

	// Stopped, it waits again; resumed, in the same log, it follows on.
	stop := w.ralph("stop", "--now")
	require.Equal(t, 0, stop.code, stop.stderr)
	assert.NotEqual(t, 0, exitCodeOf(loop.Wait()), stderr.String())
	waitFor(t, "the watcher to wait after the stopped run", waitings(2))
	require.NoError(t, os.Remove(filepath.Join(w.state, "hold")))
	resumed := w.ralph("loop", "--resume")
	require.Equal(t, 2, resumed.code, resumed.stderr)
	waitFor(t, "the watcher to follow the resumed run to its end", waitings(3))
	out := lines.String()
	after := out[strings.Index(out, "the next run, in "):]
	assert.Equal(t, 1, strings.Count(after, "loop.started"), "each line once: %s", after)
	assert.Equal(t, 1, strings.Count(after, "loop.resumed"), after)
	assert.Equal(t, 2, strings.Count(after, "loop.terminate"), after)

	require.NoError(t, watch.Process.Signal(os.Interrupt))
	assert.NoError(t, watch.Wait(), "interrupted, it exits 0")
}

package watch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view/api"
)

// The tests here write a workspace's files as ralph writes them (a loop's
// checkpoint, log, activity and lock naming this process, so it reads as
// running) and look at what the program makes of them.

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// writeLoop writes the files of a loop in ws whose hat works in its first
// iteration.
func writeLoop(t *testing.T, ws, runID, hat, said string) {
	t.Helper()
	dir := filepath.Join(ws, runfiles.DirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	logName := "events-" + runID + ".jsonl"
	ralph := func(sec int, topic string, payload any) events.Event {
		data, err := json.Marshal(payload)
		require.NoError(t, err)
		return events.Event{TS: start.Add(time.Duration(sec) * time.Second), Topic: topic, Payload: data, Source: events.SourceRalph}
	}
	lines := []events.Event{
		ralph(0, runfiles.TopicLoopStarted, map[string]any{"run_id": runID, "objective": "Add a --json flag", "objective_source": "PROMPT.md", "hats": []string{"planner", "builder", "reviewer"}}),
		ralph(1, runfiles.TopicIterationStarted, map[string]any{"iteration": 1, "hat": hat, "backend": "claude", "events": []int64{0}}),
		{TS: start.Add(20 * time.Second), Topic: "plan.ready", Payload: json.RawMessage(`"three steps"`), Source: events.SourceAgent, Hat: hat, Iteration: 1},
		ralph(21, runfiles.TopicEventRouted, map[string]any{"topic": "plan.ready", "to": []string{"builder"}}),
		ralph(22, runfiles.TopicCommit, map[string]any{"hash": "0123456789abcdef", "subject": "plan the flag"}),
	}
	var log []byte
	for _, ev := range lines {
		line, err := events.EncodeLine(ev)
		require.NoError(t, err)
		log = append(log, line...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, logName), log, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, runfiles.CurrentEventsFile), []byte(filepath.Join(runfiles.DirName, logName)+"\n"), 0o644))
	st := &runfiles.RunState{RunID: runID, EventsFile: filepath.Join(runfiles.DirName, logName), Objective: "Add a --json flag\nwith tests",
		MaxIterations: 10, StartedAt: start, SegmentStart: start,
		Running: &runfiles.RunningIteration{Iteration: 1, Hat: hat, StartedAt: start.Add(time.Second)}}
	require.NoError(t, runfiles.Checkpoint{Path: filepath.Join(dir, runfiles.StateFile)}.Save(st, runfiles.PhaseRunning, start))
	writeLock(t, filepath.Join(dir, runfiles.LockFile), runID)
	acts := []runfiles.ActivityRecord{
		{TS: start.Add(2 * time.Second), Iteration: 1, Hat: hat, Kind: events.ActivityTool, Tool: events.ToolRead, ToolName: "Read", Path: "README.md"},
		{TS: start.Add(3 * time.Second), Iteration: 1, Hat: hat, Kind: events.ActivityTool, Tool: events.ToolShell, ToolName: "Bash", Command: "go test ./..."},
		{TS: start.Add(4 * time.Second), Iteration: 1, Hat: hat, Kind: events.ActivityUsage, Tokens: &events.Usage{InputTokens: 1200, OutputTokens: 300}, CostUSD: 0.0123},
		{TS: start.Add(5 * time.Second), Iteration: 1, Hat: hat, Kind: events.ActivityText, Text: said},
	}
	path := runfiles.In(ws).Activity(runID)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var data []byte
	for _, a := range acts {
		line, err := json.Marshal(a)
		require.NoError(t, err)
		data = append(append(data, line...), '\n')
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// writeLock names this process as the holder of the lock at path.
func writeLock(t *testing.T, path, runID string) {
	t.Helper()
	host, err := os.Hostname()
	require.NoError(t, err)
	data, err := json.Marshal(runfiles.LockInfo{RunID: runID, PID: os.Getpid(), Host: host, StartedAt: start})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// writeAutopilot writes an autopilot running three slots in dir.
func writeAutopilot(t *testing.T, dir string, paused bool) {
	t.Helper()
	st := runfiles.AutopilotState{RunID: "20261122-100000", StartedAt: start, Source: "tk", Parallel: 3, StartedCount: 3,
		Active: map[string]runfiles.TaskSlot{}, Paused: paused}
	for i, task := range []string{"api", "ui", "docs"} {
		slot := string(rune('1' + i))
		wt := filepath.Join(".worktrees", task)
		st.Active[slot] = runfiles.TaskSlot{Task: task, Title: "Task " + task, Worktree: wt, StartedAt: start.Add(time.Duration(i) * time.Second), Attempt: 1}
		writeLoop(t, filepath.Join(dir, wt), "20261122-10000"+slot+"-abcdef", "planner", "Planning "+task+".")
	}
	ralphDir := filepath.Join(dir, runfiles.DirName)
	require.NoError(t, os.MkdirAll(ralphDir, 0o755))
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ralphDir, runfiles.AutopilotStateFile), data, 0o644))
	line, err := events.EncodeLine(events.Event{TS: start, Topic: runfiles.TopicAutopilotStarted, Source: events.SourceRalph,
		Payload: json.RawMessage(`{"runId":"20261122-100000","source":"tk","parallel":3}`)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ralphDir, runfiles.AutopilotEventsFile), line, 0o644))
	writeLock(t, filepath.Join(ralphDir, runfiles.AutopilotLockFile), st.RunID)
}

func testModel(t *testing.T, dir, task string) *model {
	t.Helper()
	now := start.Add(83 * time.Second)
	return newModel(Options{Dir: dir, Task: task, Now: func() time.Time { return now }, Loc: time.UTC}, nil)
}

// screen renders m as text, checking that it fits its size.
func screen(t *testing.T, m *model) string {
	t.Helper()
	out := ansi.Strip(m.render(m.opts.Now()))
	lines := strings.Split(out, "\n")
	assert.Len(t, lines, m.height, "the screen is as high as the terminal")
	for _, l := range lines {
		assert.Less(t, ansi.StringWidth(l), m.width, "a line leaves the last column free: %q", l)
	}
	return out + "\n"
}

func press(m *model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "shift+tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		default:
			msg = tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		}
		_, cmd := m.Update(msg)
		settle(m, cmd)
	}
}

// settle runs the reads of the workspace cmd asks for, one after the
// other, as the program would; it leaves every other command (the clock,
// quitting) alone.
func settle(m *model, cmd tea.Cmd) {
	for cmd != nil {
		msg, ok := cmd().(readMsg)
		if !ok {
			return
		}
		_, cmd = m.Update(msg)
	}
}

func TestALoopAt80x24(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-abcdef", "planner", "I will plan the flag.\nFirst, the parser.")
	m := testModel(t, dir, "")
	require.NotNil(t, m.w.Loop)
	assert.True(t, m.w.Loop.Running, "the lock names a live process")
	golden.Assert(t, "testdata/loop-80x24.golden", screen(t, m))

	press(m, "up", "up", "enter")
	require.NotNil(t, m.payload)
	assert.Equal(t, "plan.ready", m.payload.Event.Topic)
	golden.Assert(t, "testdata/payload-80x24.golden", screen(t, m))
	press(m, "esc")
	assert.Nil(t, m.payload)
	assert.False(t, m.follow, "moving up stops following")
	press(m, "f")
	assert.True(t, m.follow)

	press(m, "?")
	help := screen(t, m)
	assert.Contains(t, help, "  q             quit (the run goes on)")
	assert.Contains(t, help, "  tab ] →       next slot")
	press(m, "x")
	assert.False(t, m.help.ShowAll, "any key closes the help")
}

func TestAnAutopilotAt80x24(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	m := testModel(t, dir, "")
	require.NotNil(t, m.w.Autopilot)
	assert.True(t, m.w.Autopilot.Running)
	require.Len(t, m.w.Slots, 3)
	golden.Assert(t, "testdata/autopilot-80x24.golden", screen(t, m))

	press(m, "tab")
	assert.Equal(t, "ui", m.task)
	assert.Contains(t, screen(t, m), "| Planning ui.")
	press(m, "shift+tab", "shift+tab")
	assert.Equal(t, "docs", m.task, "shift+tab goes round backwards")
	assert.Equal(t, "docs", testModel(t, dir, "docs").task, "--task selects a slot")
	assert.Equal(t, "ui", testModel(t, dir, "2").task, "or its slot")
}

// The tasks whose pull requests wait for review are listed under the
// autopilot, each with its pull request.
func TestAnAutopilotShowsItsTasksInReview(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	path := filepath.Join(dir, runfiles.DirName, runfiles.AutopilotStateFile)
	var st runfiles.AutopilotState
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &st))
	st.Reviews = []runfiles.TaskReview{{TaskSlot: runfiles.TaskSlot{Task: "cli", Title: "Task cli"},
		PR: runfiles.PullRequest{Number: 7, URL: "https://forge.test/pull/7"}}}
	data, err = json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	m := testModel(t, dir, "")
	out := screen(t, m)
	assert.Contains(t, out, " in review    cli (Task cli): pull request #7, https://forge.test/pull/7\n")
}

func TestResizeRedrawsToTheNewSize(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	m := testModel(t, dir, "")
	for _, size := range [][2]int{{100, 30}, {80, 24}, {60, 12}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		screen(t, m)
	}
}

func TestPauseAndResumeWriteTheAutopilotsRequests(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	m := testModel(t, dir, "")
	control := runfiles.In(dir).Control()
	press(m, "p")
	assert.FileExists(t, filepath.Join(control, string(runfiles.ControlPause)))
	assert.Equal(t, "asked the autopilot to pause: no new task starts", m.notice)

	writeAutopilot(t, dir, true) // the autopilot took the request
	_, cmd := m.Update(changedMsg{})
	settle(m, cmd)
	require.True(t, m.w.Autopilot.Paused)
	press(m, "p")
	assert.FileExists(t, filepath.Join(control, string(runfiles.ControlResume)))
	assert.NoFileExists(t, filepath.Join(control, string(runfiles.ControlPause)), "a resume cancels a pending pause")
}

func TestStopAsksTwice(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-abcdef", "builder", "Building.")
	m := testModel(t, dir, "")
	stop := filepath.Join(dir, runfiles.DirName, runfiles.StopFile)

	press(m, "p")
	assert.Contains(t, m.notice, "a lone loop cannot pause: s stops it")
	press(m, "s", "x")
	assert.Equal(t, "not stopped", m.notice)
	assert.NoFileExists(t, stop)

	press(m, "s")
	assert.Contains(t, screen(t, m), "press s again to stop")
	press(m, "s")
	data, err := os.ReadFile(stop)
	require.NoError(t, err)
	assert.Equal(t, string(runfiles.StopAtBoundary)+"\n", string(data), "the request ralph stop writes")
}

func TestNothingRunsYet(t *testing.T) {
	dir := t.TempDir()
	m := testModel(t, dir, "")
	assert.Contains(t, screen(t, m), "no run here yet: waiting for `ralph loop` or `ralph autopilot` to start")
	assert.NoDirExists(t, filepath.Join(dir, runfiles.DirName), "watching writes nothing")
}

func TestTheHatLineIsThePlaceInTheGraph(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ralph.yml"), []byte(`event_loop:
  prompt: Add a flag.
hats:
  planner:
    triggers: [task.start]
    publishes: [plan.ready]
  builder:
    triggers: [plan.ready, review.rejected]
    publishes: [build.done]
  reviewer:
    triggers: [build.done]
    publishes: [review.rejected, LOOP_COMPLETE]
`), 0o644))
	g := api.LoadGraph(ws, &runfiles.Launch{})
	require.NotNil(t, g)
	assert.Equal(t, "planner ─plan.ready→, reviewer ─review.rejected→ [builder] ─build.done→ reviewer", position(g, "builder"))
	assert.Equal(t, "builder ─build.done→ [reviewer] ─review.rejected→ builder, ─LOOP_COMPLETE→ done", position(g, "reviewer"))
	assert.Equal(t, "start ─task.start→ [planner] ─plan.ready→ builder", position(g, "planner"))

	assert.Nil(t, api.LoadGraph(ws, &runfiles.Launch{Configs: []string{"missing.yml"}}), "a config that does not load has no graph")
	assert.NotNil(t, api.LoadGraph(ws, &runfiles.Launch{Hats: "tdd"}), "-H names a preset")
}

func TestAnswering(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-abcdef", "builder", "Building.")
	m := testModel(t, dir, "")
	press(m, "a")
	assert.Nil(t, m.answer)
	assert.Equal(t, "no question waits for an answer", m.notice)

	q := runfiles.Question{ID: "q-1", Text: "Which database?", Options: []string{"postgres", "sqlite"}, Hat: "builder"}
	m.w.Loop.Run.Question = &q
	press(m, "a", "s", "q", "l", "x", "backspace")
	require.NotNil(t, m.answer)
	assert.Equal(t, "sql", string(m.answer.text), "keys are text while answering, q and s too")
	out := screen(t, m)
	assert.Contains(t, out, "── question q-1 from builder")
	assert.Contains(t, out, "   2) sqlite")
	assert.Contains(t, out, " answer: sql█")
	press(m, "esc")
	assert.Nil(t, m.answer)
	assert.Equal(t, "not answered", m.notice)

	a := answerInput{question: q}
	assert.Equal(t, "sqlite", a.answerText("2"), "a number alone picks that option")
	assert.Equal(t, "3", a.answerText("3"), "past the options it is the text")
	assert.Equal(t, "postgres, please", a.answerText("postgres, please"))
}

func TestARemoteSlotShowsItsLogCopy(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	// The third task runs on a worker: the coordinator has a copy of its
	// log and the worker's name, and no worktree.
	remote := filepath.Join(t.TempDir(), "elsewhere")
	writeLoop(t, remote, "20261122-100003-abcdef", "builder", "Building docs.")
	data, err := os.ReadFile(filepath.Join(remote, runfiles.DirName, "events-20261122-100003-abcdef.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(runfiles.In(dir).RemoteEvents("docs")), 0o755))
	require.NoError(t, os.WriteFile(runfiles.In(dir).RemoteEvents("docs"), data, 0o644))
	require.NoError(t, runfiles.WriteWorkerInfo(dir, "docs", runfiles.WorkerInfo{Worker: "host-b", Attempt: 1}))

	m := testModel(t, dir, "docs")
	require.Equal(t, "docs", m.task)
	l := m.w.Loop
	require.NotNil(t, l)
	assert.Equal(t, "host-b", l.Worker)
	assert.True(t, l.Running, "its log's run has not ended")
	out := screen(t, m)
	assert.Contains(t, out, "> slot 3  docs       builder    #1")
	assert.Contains(t, out, "on host-b")
	assert.Contains(t, out, "agent activity (runs on worker host-b; only its events come here)")
	assert.Contains(t, out, "iteration 1 · builder (claude) · working", "its limit is in its config, on the worker")
	assert.Contains(t, out, "plan.ready → builder")
}

func TestTheNewerOfALoopAndAnAutopilotThatEnded(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	require.NoError(t, os.Remove(runfiles.In(dir).AutopilotLock()))
	assert.NotNil(t, testModel(t, dir, "").w.Autopilot, "the autopilot is the last thing that ran here")

	writeLoop(t, dir, "20261122-110000-abcdef", "builder", "Building.")
	require.NoError(t, os.Remove(runfiles.In(dir).Lock()))
	st, phase, err := runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Load()
	require.NoError(t, err)
	st.StartedAt = start.Add(time.Hour)
	require.NoError(t, runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Save(st, phase, start))
	m := testModel(t, dir, "")
	assert.Nil(t, m.w.Autopilot, "a loop that started after the autopilot is what ran last")
	require.NotNil(t, m.w.Loop)
	assert.Contains(t, screen(t, m), "builder (claude) · not running (cut off; ralph loop --resume)")
	press(m, "s", "s")
	assert.Equal(t, "no loop runs here to stop", m.notice)
	assert.NoFileExists(t, filepath.Join(dir, runfiles.DirName, runfiles.StopFile))
}

func TestPlainLinesWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-abcdef", "planner", "Planning.")
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // print what there is, and stop following at once
	var out strings.Builder
	now := start.Add(83 * time.Second)
	require.NoError(t, Start(ctx, nil, &out, Options{Dir: dir, Now: func() time.Time { return now }, Loc: time.UTC, Term: "xterm"}))
	golden.Assert(t, "testdata/plain.golden", out.String())
	assert.NotContains(t, out.String(), "\x1b", "no escape sequence in plain lines")
}

func TestOneReadOfTheWorkspaceAtATime(t *testing.T) {
	dir := t.TempDir()
	writeAutopilot(t, dir, false)
	m := testModel(t, dir, "")
	require.Equal(t, "api", m.task)

	first := m.read()
	require.NotNil(t, first, "a change asks for a read")
	assert.Nil(t, m.read(), "a second change while it runs starts none")
	press(m, "tab") // the selection moves while the read runs
	assert.Equal(t, "ui", m.task)
	assert.Equal(t, 0, m.w.Selected, "the screen keeps what it has until a read brings the new slot")

	again := m.done(first().(readMsg))
	assert.Equal(t, 0, m.w.Selected, "a read for the slot left is dropped")
	require.NotNil(t, again, "and the workspace read again for the slot selected")
	settle(m, again)
	assert.Equal(t, "ui", m.task)
	assert.Equal(t, 1, m.w.Selected)
	assert.False(t, m.reading)
	assert.NotNil(t, m.read(), "with none under way, a change reads again")
}

func TestGuiding(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-abcdef", "builder", "Building.")
	m := testModel(t, dir, "")
	press(m, "g", "k", "e", "e", "p", " ", "q", "s", "x", "backspace")
	require.NotNil(t, m.guide)
	assert.Equal(t, "keep qs", string(m.guide.text), "keys are text while guiding, q and s too")
	assert.Contains(t, screen(t, m), " guidance: keep qs█")
	press(m, "esc")
	assert.Nil(t, m.guide)
	assert.Equal(t, "no guidance sent", m.notice)

	press(m, "g", "enter")
	require.NotNil(t, m.guide, "enter sends no empty guidance")
	for _, r := range "keep the API" {
		press(m, string(r))
	}
	press(m, "enter")
	assert.Nil(t, m.guide)
	assert.Equal(t, "guidance sent; the run's next iteration reads it", m.notice)
	path, err := runfiles.CurrentLog(dir)
	require.NoError(t, err)
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	last := recs[len(recs)-1].Event
	assert.Equal(t, "human.guidance", last.Topic)
	assert.Equal(t, events.SourceHuman, last.Source)
	assert.Equal(t, "keep the API", last.PayloadText())
}

// The screen shows a run that ended, then the run started next in the
// workspace, without being restarted.
func TestTheNextRunReplacesTheOneThatEnded(t *testing.T) {
	dir := t.TempDir()
	writeLoop(t, dir, "20261122-100000-aaaaaa", "builder", "Building.")
	path, err := runfiles.CurrentLog(dir)
	require.NoError(t, err)
	end := events.Event{TS: start.Add(30 * time.Second), Topic: runfiles.TopicLoopTerminate, Source: events.SourceRalph,
		Payload: json.RawMessage(`{"reason":"completed","exit_code":0,"iterations":1}`)}
	require.NoError(t, events.AppendTo(path, end))
	require.NoError(t, os.Remove(runfiles.In(dir).Lock()))
	cp := runfiles.Checkpoint{Path: runfiles.In(dir).State()}
	st, _, err := cp.Load()
	require.NoError(t, err)
	st.Running, st.Terminated = nil, &runfiles.Termination{Reason: runfiles.ReasonCompleted}
	require.NoError(t, cp.Save(st, runfiles.PhaseDone, start))
	m := testModel(t, dir, "")
	out := screen(t, m)
	assert.Contains(t, out, "run 20261122-100000-aaaaaa")
	assert.Contains(t, out, "ended: completed")

	writeLoop(t, dir, "20261122-110000-bbbbbb", "planner", "Planning.")
	settle(m, m.read())
	out = screen(t, m)
	assert.Contains(t, out, "run 20261122-110000-bbbbbb")
	assert.Contains(t, out, "planner (claude) · working")
	assert.NotContains(t, out, "ended: completed")
}

package autopilot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// memSource is a tracker in memory. Its file, tracker.txt, records each
// change, as trackers that live in the repository do.
type memSource struct {
	mu        sync.Mutex
	dir       string
	tasks     []tasks.Task
	closed    map[string]int
	reason    map[string]string // the last close's
	claimed   map[string]int
	failed    map[string]string
	failClaim map[string]bool
	// shown counts the calls of Show.
	shown int
}

func newMemSource(dir string, ts ...tasks.Task) *memSource {
	return &memSource{dir: dir, tasks: ts, closed: map[string]int{}, reason: map[string]string{}, claimed: map[string]int{},
		failed: map[string]string{}, failClaim: map[string]bool{}}
}

func (s *memSource) Name() string    { return "mem" }
func (s *memSource) Tool() string    { return "" }
func (s *memSource) Files() []string { return []string{"tracker.txt"} }

func (s *memSource) Ready(context.Context) ([]tasks.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []tasks.Task
	for _, t := range s.tasks {
		if s.closed[t.ID] == 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

func (s *memSource) Show(_ context.Context, id string) (tasks.Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown++
	for _, t := range s.tasks {
		if t.ID == id {
			t.Closed = s.closed[id] > 0
			return t, nil
		}
	}
	return tasks.Task{}, fmt.Errorf("no task %s", id)
}

func (s *memSource) note(line string) {
	f, err := os.OpenFile(filepath.Join(s.dir, "tracker.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, _ = f.WriteString(line + "\n")
		_ = f.Close()
	}
}

func (s *memSource) Claim(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failClaim[id] {
		return errors.New("the tracker refused")
	}
	s.claimed[id]++
	s.note("claim " + id)
	return nil
}

func (s *memSource) Close(_ context.Context, id, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed[id]++
	s.reason[id] = reason
	s.note("close " + id)
	return nil
}

func (s *memSource) Fail(_ context.Context, id, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed[id] = reason
	s.note("fail " + id)
	return nil
}

// fakeRunner runs no process: each loop commits a file named after its
// task in the worktree and then waits for the test to end it.
type fakeRunner struct {
	started chan *fakeLoop
	mu      sync.Mutex
	running int
	most    int
}

func newFakeRunner() *fakeRunner { return &fakeRunner{started: make(chan *fakeLoop, 100)} }

type fakeLoop struct {
	job    Job
	runner *fakeRunner
	end    chan LoopResult
	done   chan struct{}
	res    LoopResult
}

func (r *fakeRunner) Start(_ context.Context, job Job) (Handle, error) {
	if err := commitIn(job.Dir, job.Task+".txt", job.Task+"\n"); err != nil {
		return nil, err
	}
	l := &fakeLoop{job: job, runner: r, end: make(chan LoopResult, 1), done: make(chan struct{})}
	r.mu.Lock()
	r.running++
	r.most = max(r.most, r.running)
	r.mu.Unlock()
	go func() {
		l.res = <-l.end
		r.mu.Lock()
		r.running--
		r.mu.Unlock()
		close(l.done)
	}()
	r.started <- l
	return l, nil
}

// StartsConcurrently: the harness's runs launch their loops off the
// state machine's goroutine, as the local runner's do.
func (r *fakeRunner) StartsConcurrently() bool { return true }

func (r *fakeRunner) Attach(context.Context, string) (Handle, error) {
	return nil, errors.New("nothing to attach to")
}

func (r *fakeRunner) mostAtOnce() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.most
}

func (l *fakeLoop) PID() int         { return 0 }
func (l *fakeLoop) Wait() LoopResult { <-l.done; return l.res }
func (l *fakeLoop) Interrupt()       { l.finish(LoopResult{ExitCode: exitcode.Interrupted}) }
func (l *fakeLoop) complete()        { l.finish(LoopResult{ExitCode: exitcode.OK, Reason: "completed"}) }
func (l *fakeLoop) finish(r LoopResult) {
	select {
	case l.end <- r:
	default:
	}
}

// harness runs an autopilot in a goroutine and lets the test watch its
// events and drive its loops.
type harness struct {
	t      *testing.T
	repo   string
	source *memSource
	// src, when set, is the tracker instead of source; pulls is where
	// deliver: pr opens pull requests.
	src    tasks.Source
	pulls  forge.PullRequests
	runner *fakeRunner
	events chan events.Event
	done   chan struct{}
	res    Result
	err    error
}

func newHarness(t *testing.T, ts ...tasks.Task) *harness {
	repo := gittest.NewRepo(t)
	gittest.CommitFile(t, repo, "README.md", "hello\n", "start")
	return &harness{t: t, repo: repo, source: newMemSource(repo, ts...), runner: newFakeRunner(),
		events: make(chan events.Event, 1000), done: make(chan struct{})}
}

func (h *harness) settings(parallel int) config.Autopilot {
	return config.Autopilot{Parallel: parallel, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees"}
}

// start runs the autopilot with h.runner, or with runner when given (one
// that wraps h.runner).
func (h *harness) start(ctx context.Context, s config.Autopilot, runner ...Runner) {
	run := Runner(h.runner)
	if len(runner) > 0 {
		run = runner[0]
	}
	go func() {
		defer close(h.done)
		src := tasks.Source(h.source)
		if h.src != nil {
			src = h.src
		}
		h.res, h.err = Run(ctx, Options{Repo: h.repo, Settings: s, Source: src, Runner: run, PullRequests: h.pulls,
			OnEvent: func(ev events.Event, _ *runfiles.AutopilotState) { h.events <- ev }})
	}()
}

// next waits for the next event with topic, failing on the autopilot's end.
func (h *harness) next(topic string) events.Event {
	h.t.Helper()
	for {
		select {
		case ev := <-h.events:
			if ev.Topic == topic {
				return ev
			}
		case <-h.done:
			// Events recorded just before the end are still queued.
			for {
				select {
				case ev := <-h.events:
					if ev.Topic == topic {
						return ev
					}
				default:
					h.t.Fatalf("the autopilot ended (%+v, %v) before %s", h.res, h.err, topic)
				}
			}
		}
	}
}

// loop waits for the next loop to start.
func (h *harness) loop() *fakeLoop {
	h.t.Helper()
	select {
	case l := <-h.runner.started:
		return l
	case <-h.done:
		h.t.Fatalf("the autopilot ended (%+v, %v) before another loop started", h.res, h.err)
	}
	return nil
}

func (h *harness) wait() Result {
	h.t.Helper()
	<-h.done
	return h.res
}

func (h *harness) topics() []string {
	var out []string
	for {
		select {
		case ev := <-h.events:
			out = append(out, ev.Topic)
		default:
			return out
		}
	}
}

func task(id string, prio int, tags ...string) tasks.Task {
	return tasks.Task{ID: id, Title: "Task " + id, Priority: prio, Tags: tags}
}

func TestRunWorksThroughTheQueueInPriorityOrder(t *testing.T) {
	h := newHarness(t, task("c", 3), task("a", 1), task("b", 2))
	h.start(t.Context(), h.settings(1))
	assert.Equal(t, "mem", payloadOf(h.next(runfiles.TopicAutopilotStarted)).Source)
	var order []string
	for range 3 {
		l := h.loop()
		order = append(order, l.job.Task)
		l.complete()
		h.next(runfiles.TopicTaskCompleted)
	}
	h.next(runfiles.TopicAllDone)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, []string{"a", "b", "c"}, order, "highest priority first")
	assert.Equal(t, Result{ExitCode: 0, Completed: 3}, res)
	for _, id := range []string{"a", "b", "c"} {
		assert.FileExists(t, filepath.Join(h.repo, id+".txt"), "merged into the base branch")
		assert.Equal(t, 1, h.source.closed[id], "closed once")
		assert.NoDirExists(t, filepath.Join(h.repo, ".worktrees", id), "worktree removed")
		assert.Empty(t, strings.TrimSpace(gittest.Run(t, h.repo, "branch", "--list", "ralph/"+id)), "branch removed")
	}
	assert.Empty(t, strings.TrimSpace(gittest.Run(t, h.repo, "status", "--porcelain")), "the checkout is left clean")
	assert.Contains(t, gittest.Run(t, h.repo, "log", "--format=%s"), "ralph: close a", "tracker changes are committed")
}

// Ready's tasks are whole, and a task this run merged is not closed yet:
// a run asks the tracker about no task one at a time, which for a command
// source without show: is a list per question.
func TestARunAsksTheTrackerAboutNoTaskAlone(t *testing.T) {
	h := newHarness(t, task("a", 1, "component:api"), task("b", 2))
	h.start(t.Context(), h.settings(2))
	h.loop().complete()
	h.loop().complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 2}, res)
	assert.Equal(t, 0, h.source.shown, "calls of Show")
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, h.source.closed)
	assert.Contains(t, payloadOf(h.next(runfiles.TopicTaskAssigned)).Components, "api", "the task as Ready gave it")
}

func TestRunRespectsParallelAndFillsFreedSlots(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 1), task("c", 1), task("d", 1), task("e", 1))
	h.start(t.Context(), h.settings(2))
	first, second := h.loop(), h.loop()
	assert.Equal(t, []string{"a", "b"}, []string{first.job.Task, second.job.Task})
	first.complete()
	third := h.loop()
	assert.Equal(t, "c", third.job.Task, "a freed slot takes the next task")
	second.complete()
	third.complete()
	for _, l := range []*fakeLoop{h.loop(), h.loop()} {
		l.complete()
	}
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, 5, res.Completed)
	assert.Equal(t, 2, h.runner.mostAtOnce(), "never more loops than slots")
}

func TestRunNeverOverlapsTasksSharingAComponent(t *testing.T) {
	h := newHarness(t, task("a", 1, "component:api"), task("b", 2, "component:api"), task("c", 3, "component:ui"))
	h.start(t.Context(), h.settings(3))
	a, c := h.loop(), h.loop()
	assert.Equal(t, []string{"a", "c"}, []string{a.job.Task, c.job.Task})
	held := payloadOf(h.next(runfiles.TopicTaskHeld))
	assert.Equal(t, "b", held.Task)
	assert.Equal(t, "a", held.HeldBy)
	a.complete()
	h.next(runfiles.TopicTaskCompleted)
	b := h.loop()
	assert.Equal(t, "b", b.job.Task, "starts once the holder is merged")
	b.complete()
	c.complete()
	res := h.wait()
	assert.Equal(t, 3, res.Completed)
}

func TestRunFailsATaskWhoseLoopFailsAndGoesOn(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	h.start(t.Context(), h.settings(1))
	a := h.loop()
	a.finish(LoopResult{ExitCode: exitcode.Limit, Reason: "max_iterations", Message: "reached max_iterations (3)"})
	failed := payloadOf(h.next(runfiles.TopicTaskFailed))
	assert.Equal(t, "a", failed.Task)
	assert.Contains(t, failed.Reason, "max_iterations")
	h.loop().complete()
	res := h.wait()
	assert.Equal(t, Result{ExitCode: exitcode.Failure, Completed: 1, Failed: 1}, res)
	assert.Contains(t, h.source.failed["a"], "max_iterations", "the tracker hears why")
	assert.DirExists(t, filepath.Join(h.repo, ".worktrees", "a"), "a failed task's worktree is kept")
	assert.Equal(t, 0, h.source.closed["a"])
}

func TestRunGoesOnAfterAClaimFails(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	h.source.failClaim["a"] = true
	h.start(t.Context(), h.settings(1))
	// A task that could not be assigned is told apart from one whose
	// loop failed: in its event, its outcome and the tracker's note.
	failed := payloadOf(h.next(runfiles.TopicTaskAssignFailed))
	assert.Equal(t, "a", failed.Task)
	assert.Contains(t, failed.Reason, "claiming it in mem failed: the tracker refused")
	h.loop().complete()
	res := h.wait()
	assert.Equal(t, 1, res.Completed)
	assert.Equal(t, 1, res.Failed)
	assert.Equal(t, "not started: "+failed.Reason, h.source.failed["a"])
	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	require.Len(t, st.Failures, 1)
	assert.True(t, st.Failures[0].Unassigned)
	assert.Equal(t, "not started", runfiles.FailureWord(st.Failures[0]))
	assert.Contains(t, readFile(t, h.repo, ".ralph/progress.md"), "not started: a (")
}

func TestRunRefusesAnUnusableTaskID(t *testing.T) {
	h := newHarness(t, task("../x", 1), task("ok", 2))
	h.start(t.Context(), h.settings(1))
	failed := payloadOf(h.next(runfiles.TopicTaskAssignFailed))
	assert.Equal(t, "../x", failed.Task)
	h.loop().complete()
	res := h.wait()
	assert.Contains(t, h.source.failed["../x"], "not started: the task id", "the tracker hears why")
	assert.Equal(t, 1, res.Completed)
	assert.NoDirExists(t, filepath.Join(h.repo, "x"))
}

func TestPauseStopsNewTasksButNotRunningOnes(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	h.start(t.Context(), h.settings(1))
	a := h.loop()
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlPause))
	h.next(runfiles.TopicAutopilotPaused)
	a.complete()
	h.next(runfiles.TopicTaskCompleted)
	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	assert.True(t, st.Paused)
	assert.Empty(t, st.Active, "nothing new starts while paused")
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlResume))
	h.next(runfiles.TopicAutopilotResumed)
	h.loop().complete()
	h.loop().complete()
	assert.Equal(t, 3, h.wait().Completed)
}

func TestStopLetsRunningTasksFinishAndMerge(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	h.start(t.Context(), h.settings(2))
	a, b := h.loop(), h.loop()
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlStop))
	h.next(runfiles.TopicAutopilotStopping)
	a.complete()
	b.complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{ExitCode: 0, Completed: 2}, res)
	assert.NotContains(t, h.topics(), runfiles.TopicAllDone, "c was never started: not all done")
	assert.Equal(t, 0, h.source.claimed["c"])
}

func TestStopNowInterruptsLoopsAndLeavesTheRunResumable(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	h.start(t.Context(), h.settings(2))
	h.loop()
	h.loop()
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlStopNow))
	res := h.wait()
	assert.Equal(t, Result{ExitCode: exitcode.Interrupted, Resumable: true}, res)
	st, err := runfiles.ReadAutopilotStatus(h.repo, time.Now())
	require.NoError(t, err)
	assert.Len(t, st.Active, 2, "both stay in their slots for the next run")
	assert.Nil(t, st.Ended)
}

func TestASecondAutopilotIsRefusedWhileOneRuns(t *testing.T) {
	h := newHarness(t, task("a", 1))
	h.start(t.Context(), h.settings(1))
	l := h.loop()
	_, err := Run(t.Context(), Options{Repo: h.repo, Settings: h.settings(1), Source: h.source, Runner: h.runner})
	// Both autopilots are this process, whose own locks the lock's check
	// does not list: the second sees a lock its holder does not hold, and
	// is refused as beside an orphan. Across processes it is told that an
	// autopilot runs (*RunningError, the end-to-end tests).
	var held *runfiles.LockHeldError
	require.ErrorAs(t, err, &held)
	l.complete()
	assert.Equal(t, 1, h.wait().Completed)
}

// A loop whose workspace is the repository itself (not a task's
// worktree) shares the checkout the autopilot merges into: the autopilot
// does not start beside it, and changes nothing.
func TestTheAutopilotDoesNotStartBesideALoopInItsCheckout(t *testing.T) {
	h := newHarness(t, task("a", 1))
	held := runfiles.LockInfo{RunID: "20260101-000000-abcdef", PID: os.Getpid(), Host: "here", StartedAt: time.Now()}
	lock, err := runfiles.AcquireLock(t.Context(), runfiles.In(h.repo).Lock(), held, runfiles.LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()

	_, err = Run(t.Context(), Options{Repo: h.repo, Settings: h.settings(1), Source: h.source, Runner: h.runner})
	var loop *LoopRunningError
	require.ErrorAs(t, err, &loop)
	assert.Equal(t, held.RunID, loop.Holder.RunID)
	assert.Contains(t, err.Error(), "a ralph loop is running in "+h.repo+" (run "+held.RunID+", pid ")
	assert.NoFileExists(t, runfiles.In(h.repo).AutopilotEvents(), "nothing was recorded")
	ownHeld, _ := runfiles.LockHeld(runfiles.In(h.repo).AutopilotLock())
	assert.False(t, ownHeld, "its own lock is let go")
}

func TestMaxTasksBoundsHowManyStart(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	s := h.settings(3)
	s.MaxTasks = 2
	h.start(t.Context(), s)
	h.loop().complete()
	h.loop().complete()
	res := h.wait()
	assert.Equal(t, 2, res.Completed)
	assert.Equal(t, 0, h.source.claimed["c"])
}

func TestVerifyFailureLeavesTheBaseBranchAsItWas(t *testing.T) {
	h := newHarness(t, task("a", 1))
	s := h.settings(1)
	s.Verify = verifySpecs(t, "test ! -e a.txt")
	h.start(t.Context(), s)
	h.loop().complete()
	failed := payloadOf(h.next(runfiles.TopicTaskFailed))
	assert.Contains(t, failed.Reason, "verification of the merged result failed")
	res := h.wait()
	assert.Equal(t, exitcode.Failure, res.ExitCode)
	assert.NotContains(t, gittest.Run(t, h.repo, "log", "--format=%s"), "ralph: merge a", "no merge landed")
	assert.NoFileExists(t, filepath.Join(h.repo, "a.txt"))
	assert.True(t, slices.Contains(strings.Fields(gittest.Run(t, h.repo, "branch", "--format=%(refname:short)")), "ralph/a"), "the branch is kept")
}

func payloadOf(ev events.Event) runfiles.AutopilotPayload { return runfiles.DecodeAutopilotPayload(ev) }

// commitIn commits a file in dir, as a task's loop would.
func commitIn(dir, name, content string) error {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", name}, {"commit", "-q", "--allow-empty", "-m", "add " + name}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Agent", "-c", "user.email=agent@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	return nil
}

func verifySpecs(t *testing.T, command string) []criteria.Spec {
	t.Helper()
	return []criteria.Spec{{Type: criteria.TypeCommandSucceeds, Command: command}}
}

func TestACorruptStateIsMovedAsideAndRebuiltFromTheLog(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	h.start(t.Context(), h.settings(1))
	h.loop()
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlStopNow))
	res := h.wait()
	require.True(t, res.Resumable)
	statePath := filepath.Join(h.repo, ".ralph", runfiles.AutopilotStateFile)
	require.NoError(t, os.WriteFile(statePath, []byte(`{"version": 1, "runId": "x", "act`), 0o644))

	st, notice, err := runfiles.LoadAutopilotState(filepath.Join(h.repo, ".ralph"), time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), nil, nil)
	require.NoError(t, err)
	assert.Contains(t, notice, "moved to autopilot-state.corrupt.20261124T120000Z.json")
	assert.FileExists(t, filepath.Join(h.repo, ".ralph", "autopilot-state.corrupt.20261124T120000Z.json"))
	require.Len(t, st.Active, 1, "the log still says which task runs")
	assert.Equal(t, "a", st.Active["1"].Task)
	assert.Equal(t, 1, st.StartedCount)
}

func TestAFlagThatDisagreesWithTheUnfinishedRunIsReportedAndIgnored(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	h.start(t.Context(), h.settings(1))
	h.loop()
	require.NoError(t, runfiles.RequestControl(h.repo, runfiles.ControlStopNow))
	require.True(t, h.wait().Resumable)

	again := &harness{t: t, repo: h.repo, source: h.source, runner: h.runner,
		events: make(chan events.Event, 1000), done: make(chan struct{})}
	again.start(t.Context(), h.settings(3))
	notice := payloadOf(again.next(runfiles.TopicAutopilotNotice))
	assert.Equal(t, "the unfinished run keeps its settings: parallel 1 (asked for 3)", notice.Message)
	again.loop().complete() // a, resumed
	again.loop().complete() // b: one slot, as the run began
	res := again.wait()
	assert.Equal(t, 2, res.Completed)
	assert.Equal(t, 1, again.runner.mostAtOnce())
}

func TestObjectiveAndOverlayTrustTaskCommandsOnlyWhenTold(t *testing.T) {
	tk := tasks.Task{ID: "t-1", Title: "Add a flag", Description: "Add --json.",
		Criteria: []tasks.Criterion{{Text: "the help mentions it"}, {Text: "`go test ./...`", Command: "go test ./..."}}}
	untrusted := Objective(tk, "tk", false, "")
	assert.Contains(t, untrusted, "# Add a flag\n\nAdd --json.\n\n## Acceptance criteria\n\n- the help mentions it\n- `go test ./...` succeeds\n")
	assert.Contains(t, untrusted, "task t-1 from tk")
	assert.Contains(t, Objective(tk, "tk", true, ""), "ralph runs `go test ./...` to check it")
	assert.Contains(t, Objective(tk, "tk", false, "the merge conflicted"), "## Before you go on\n\nthe merge conflicted\n")

	a := &Autopilot{opts: Options{Criteria: []criteria.Spec{{Type: criteria.TypeTestsPass}}}}
	overlay, err := a.overlay(tk)
	require.NoError(t, err)
	assert.NotContains(t, string(overlay), "go test", "tracker text does not run unless trusted")
	assert.Contains(t, string(overlay), "tests_pass", "the config's own criteria stay")
	a.opts.Settings.TrustTasks = true
	overlay, err = a.overlay(tk)
	require.NoError(t, err)
	assert.Contains(t, string(overlay), "command: go test ./...")
}

func TestALoopKilledFromOutsideIsResumed(t *testing.T) {
	h := newHarness(t, task("a", 1))
	h.start(t.Context(), h.settings(1))
	first := h.loop()
	beginRun(t, first.job.Dir)
	first.finish(LoopResult{ExitCode: 137, Message: "the loop was killed by killed"})
	assert.Contains(t, payloadOf(h.next(runfiles.TopicAutopilotNotice)).Message, "the loop of a was cut off")
	again := h.loop()
	assert.Equal(t, runfiles.StartResume, again.job.Mode)
	again.complete()
	assert.Equal(t, Result{Completed: 1}, h.wait())
}

// A loop killed before its run began has nothing to resume: it starts
// again, as new.
func TestALoopKilledBeforeItsRunBeganStartsAgain(t *testing.T) {
	h := newHarness(t, task("a", 1))
	h.start(t.Context(), h.settings(1))
	h.loop().finish(LoopResult{ExitCode: 137, Message: "the loop was killed by killed"})
	again := h.loop()
	assert.Equal(t, runfiles.StartNew, again.job.Mode)
	again.complete()
	assert.Equal(t, Result{Completed: 1}, h.wait())
}

// beginRun leaves in dir what a loop's run has once it began: its log,
// named by current-events.
func beginRun(t *testing.T, dir string) {
	t.Helper()
	state := filepath.Join(dir, runfiles.DirName)
	require.NoError(t, os.MkdirAll(state, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(state, ".gitignore"), []byte("*\n"), 0o644))
	line := `{"ts":"2026-01-01T00:00:00Z","topic":"loop.started","payload":{"run_id":"r"},"source":"ralph"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(state, "events-r.jsonl"), []byte(line), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(state, runfiles.CurrentEventsFile), []byte(runfiles.DirName+"/events-r.jsonl\n"), 0o644))
}

// Each merge mode leaves the task named on the base branch by a Ralph-Task
// trailer: on the merge commit, the squashed commit, or the last replayed
// commit.
func TestEveryMergeModeNamesTheTask(t *testing.T) {
	for _, mode := range []string{"merge", "squash", "rebase"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, task("a", 1), task("b", 2))
			s := h.settings(1)
			s.Merge = mode
			h.start(t.Context(), s)
			for range 2 {
				h.loop().complete()
				h.next(runfiles.TopicTaskCompleted)
			}
			h.next(runfiles.TopicAllDone)
			h.wait()
			require.NoError(t, h.err)
			merged, err := git.Repo{Dir: h.repo}.MergedTasks(t.Context(), "", "HEAD")
			require.NoError(t, err)
			assert.Len(t, merged, 2)
			for _, id := range []string{"a", "b"} {
				require.Contains(t, merged, id)
				assert.Contains(t, gittest.Run(t, h.repo, "show", "--name-only", "--format=", merged[id]+"^{tree}", "--"), id+".txt",
					"the commit naming %s holds its work", id)
			}
			if mode == "rebase" {
				assert.Empty(t, gittest.Run(t, h.repo, "rev-list", "--merges", "HEAD"), "no merge commit")
			}
		})
	}
}

// A task whose work the base branch already names in a Ralph-Task trailer
// (a result delivered twice, a coordinator that restarted after landing
// it) completes without a second merge.
func TestRunNeverMergesATaskTwice(t *testing.T) {
	h := newHarness(t, task("a", 1))
	h.start(t.Context(), h.settings(1))
	l := h.loop()
	// A coordinator lands the task's work on the base branch, named as
	// ralph names it, before this autopilot merges it.
	gittest.Run(t, h.repo, "merge", "--no-ff", "-q", "-m", git.WithTaskTrailer(git.MergeSubject("a", "A"), "a"), "ralph/a")
	landed := strings.TrimSpace(gittest.Run(t, h.repo, "rev-parse", "HEAD"))
	l.complete()
	notice := h.next(runfiles.TopicAutopilotNotice)
	assert.Contains(t, payloadOf(notice).Message, "a is already merged into")
	done := h.next(runfiles.TopicTaskCompleted)
	assert.Equal(t, landed, payloadOf(done).Commit)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, 1, res.Completed)
	merges := gittest.Run(t, h.repo, "log", "--format=%H", "--grep", git.TaskTrailer+": a")
	assert.Equal(t, landed, strings.TrimSpace(merges), "no second merge")
	assert.Equal(t, 1, h.source.closed["a"])
}

// A task started while more finished tasks wait to merge than there are
// slots would only wait behind them: its slot waits for a merge to land
// instead, and the merges have the autopilot to themselves. Up to a
// slots' worth may wait, so that a slot's next loop runs beside the
// merge of its last.
func TestNoTaskStartsWhileMoreTasksWaitToMergeThanThereAreSlots(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2), task("c", 3))
	gate := filepath.Join(t.TempDir(), "gate")
	s := h.settings(1)
	// a's merge waits in its verification until b has finished.
	s.Verify = verifySpecs(t, fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done", gate))
	h.start(t.Context(), s)
	h.loop().complete()
	b := h.loop() // beside a's merge: one task waits to merge
	b.complete()
	h.next(runfiles.TopicTaskFinished)
	h.next(runfiles.TopicTaskFinished)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.loop().complete()
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, 3, res.Completed)
	log, err := os.ReadFile(filepath.Join(h.repo, ".ralph", runfiles.AutopilotEventsFile))
	require.NoError(t, err)
	var seen []string
	for line := range strings.Lines(string(log)) {
		ev, err := events.ParseLine([]byte(line))
		require.NoError(t, err)
		if p := runfiles.DecodeAutopilotPayload(ev); p.Task != "" {
			seen = append(seen, ev.Topic+" "+p.Task)
		}
	}
	assert.Less(t, slices.Index(seen, "task.assigned b"), slices.Index(seen, "task.completed a"), "b starts beside a's merge: %v", seen)
	completed, assigned := slices.Index(seen, "task.completed a"), slices.Index(seen, "task.assigned c")
	require.NotEqual(t, -1, assigned, seen)
	assert.Less(t, completed, assigned, "c waits for a to merge: %v", seen)
}

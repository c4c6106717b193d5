package runfiles

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/gittest"
)

// Lines of a loop's event log, as a remote task's copy holds them.
const (
	loopStarted    = `{"ts":"2026-11-22T10:00:00Z","topic":"loop.started","payload":{"run_id":"20261122-100000"},"source":"ralph"}` + "\n"
	loopResumed    = `{"ts":"2026-11-22T10:10:00Z","topic":"loop.resumed","payload":{"run_id":"20261122-100000"},"source":"ralph"}` + "\n"
	builderStarted = `{"ts":"2026-11-22T10:00:01Z","topic":"iteration.started","payload":{"iteration":1,"hat":"builder"},"source":"ralph"}` + "\n"
	builderDone    = `{"ts":"2026-11-22T10:02:00Z","topic":"iteration.finished","payload":{"iteration":1,"hat":"builder","outcome":"success"},"source":"ralph"}` + "\n"
	agentLine      = `{"ts":"2026-11-22T10:02:01Z","topic":"build.done","payload":"ok","source":"agent","hat":"builder","iteration":1}` + "\n"
	reviewStarted  = `{"ts":"2026-11-22T10:10:01Z","topic":"iteration.started","payload":{"iteration":2,"hat":"reviewer"},"source":"ralph"}` + "\n"
	interrupted    = `{"ts":"2026-11-22T10:05:00Z","topic":"loop.terminate","payload":{"reason":"interrupted","exit_code":130},"source":"ralph"}` + "\n"
	completed      = `{"ts":"2026-11-22T10:20:00Z","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0},"source":"ralph"}` + "\n"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	gittest.WriteFile(t, filepath.Dir(path), filepath.Base(path), content)
}

// writeState writes an autopilot state in repo with task in slot 1.
func writeState(t *testing.T, repo, task string) {
	t.Helper()
	st := NewAutopilotState()
	st.RunID, st.Parallel = "20261122-100000", 1
	st.Active["1"] = TaskSlot{Task: task, Worktree: ".worktrees/" + task, StartedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Attempt: 1}
	data, err := json.Marshal(st)
	require.NoError(t, err)
	writeFile(t, In(repo).AutopilotState(), string(data))
}

func TestTaskLogPrefersTheRemoteCopy(t *testing.T) {
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".worktrees/t-1/.ralph/events-20261122-100000.jsonl"), loopStarted)
	writeFile(t, filepath.Join(repo, ".ralph/tasks/t-1/events.jsonl"), loopStarted)
	path, remote, err := TaskLog(repo, "t-1")
	require.NoError(t, err)
	assert.True(t, remote)
	assert.Equal(t, filepath.Join(repo, ".ralph/tasks/t-1/events.jsonl"), path)
	assert.Equal(t, path, In(repo).RemoteEvents("t-1"))
}

func TestTaskLogReadsTheWorktreeTheAutopilotAssigned(t *testing.T) {
	repo := t.TempDir()
	// The autopilot put t-1 in elsewhere/ (worktrees_dir changed since);
	// a stray .worktrees/t-1 is not its worktree.
	writeFile(t, In(repo).AutopilotEvents(),
		`{"ts":"2026-11-22T10:00:01Z","topic":"task.assigned","payload":{"task":"t-1","slot":"1","worktree":".worktrees/t-1","attempt":1},"source":"ralph"}`+"\n"+
			`{"ts":"2026-11-22T10:00:02Z","topic":"task.assigned","payload":{"task":"t-10","slot":"2","worktree":"other/t-10","attempt":1},"source":"ralph"}`+"\n"+
			`{"ts":"2026-11-22T11:00:01Z","topic":"task.assigned","payload":{"task":"t-1","slot":"1","worktree":"elsewhere/t-1","attempt":1},"source":"ralph"}`+"\n")
	writeFile(t, filepath.Join(repo, ".worktrees/t-1/.ralph/events-20261122-100000.jsonl"), loopStarted)
	writeFile(t, filepath.Join(repo, "elsewhere/t-1/.ralph/events-20261122-110000.jsonl"), loopStarted)
	path, remote, err := TaskLog(repo, "t-1")
	require.NoError(t, err)
	assert.False(t, remote)
	assert.Equal(t, filepath.Join(repo, "elsewhere/t-1/.ralph/events-20261122-110000.jsonl"), path)
}

func TestTaskLogFallsBackOnTheDefaultWorktreesDir(t *testing.T) {
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".worktrees/t-1/.ralph/events-20261122-100000.jsonl"), loopStarted)
	path, remote, err := TaskLog(repo, "t-1")
	require.NoError(t, err)
	assert.False(t, remote)
	assert.Equal(t, filepath.Join(repo, ".worktrees/t-1/.ralph/events-20261122-100000.jsonl"), path)
}

func TestTaskLogSaysWhereItLooked(t *testing.T) {
	repo := t.TempDir()
	_, _, err := TaskLog(repo, "t-1")
	var noLog *NoTaskLogError
	require.ErrorAs(t, err, &noLog)
	assert.Equal(t, "t-1", noLog.Task)
	assert.Equal(t, "no event log for task t-1: looked for .ralph/tasks/t-1/events.jsonl, a loop's log in .worktrees/t-1/.ralph and .ralph/tasks/t-1/loop-events.jsonl", err.Error())

	// A worktree without a loop log yet is no better.
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".worktrees/t-1/.ralph"), 0o755))
	_, _, err = TaskLog(repo, "t-1")
	require.ErrorAs(t, err, &noLog)
}

func TestTaskLogRejectsAnIDThatIsNoTask(t *testing.T) {
	_, _, err := TaskLog(t.TempDir(), "../t-1")
	require.Error(t, err)
	assert.NotErrorAs(t, err, new(*NoTaskLogError))
	assert.Contains(t, err.Error(), "task id")
}

func TestWorkerInfoRoundTrips(t *testing.T) {
	repo := t.TempDir()
	_, err := ReadWorkerInfo(repo, "t-1")
	require.ErrorIs(t, err, os.ErrNotExist)
	info := WorkerInfo{Worker: "build-3", Run: "20261122-100000", Attempt: 2, Since: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	require.NoError(t, WriteWorkerInfo(repo, "t-1", info))
	got, err := ReadWorkerInfo(repo, "t-1")
	require.NoError(t, err)
	assert.Equal(t, info, got)
	data, err := os.ReadFile(filepath.Join(repo, ".ralph/tasks/t-1/worker.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"worker":"build-3","run":"20261122-100000","attempt":2,"since":"2026-11-22T10:00:00Z"}`, string(data))
}

func TestStatusOfARemoteSlotComesFromItsLogsCopy(t *testing.T) {
	repo := t.TempDir()
	writeState(t, repo, "t-1")
	mirror := In(repo).RemoteEvents("t-1")
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)
	slot := func() SlotStatus {
		t.Helper()
		s, err := ReadAutopilotStatus(repo, now)
		require.NoError(t, err)
		require.Len(t, s.Active, 1)
		return s.Active[0]
	}

	writeFile(t, mirror, "")
	assert.Equal(t, SlotStatus{Slot: "1", Task: "t-1", Worktree: ".worktrees/t-1", Elapsed: "30m0s", Attempt: 1, LoopRunning: true},
		slot(), "a copy without lines yet: the worker has not said otherwise")

	require.NoError(t, WriteWorkerInfo(repo, "t-1", WorkerInfo{Worker: "build-3", Run: "20261122-100000", Attempt: 1}))
	writeFile(t, mirror, loopStarted+builderStarted+agentLine)
	s := slot()
	assert.Equal(t, "build-3", s.Worker)
	assert.Equal(t, "builder", s.Hat)
	assert.Equal(t, 1, s.Iteration)
	assert.True(t, s.LoopRunning)

	writeFile(t, mirror, loopStarted+builderStarted+builderDone+agentLine+interrupted)
	s = slot()
	assert.Equal(t, "builder", s.Hat)
	assert.Equal(t, 1, s.Iteration)
	assert.False(t, s.LoopRunning, "the worker's run was cut off; the next has not started")

	writeFile(t, mirror, loopStarted+builderStarted+builderDone+interrupted+loopResumed+reviewStarted)
	s = slot()
	assert.Equal(t, "reviewer", s.Hat)
	assert.Equal(t, 2, s.Iteration)
	assert.True(t, s.LoopRunning, "another worker goes on in the same copy")

	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"worker":"build-3"`)
}

func TestStatusOfALocalSlotHasNoWorker(t *testing.T) {
	repo := t.TempDir()
	writeState(t, repo, "t-1")
	s, err := ReadAutopilotStatus(repo, time.Now())
	require.NoError(t, err)
	require.Len(t, s.Active, 1)
	assert.Empty(t, s.Active[0].Worker)
	data, err := json.Marshal(s.Active[0])
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"worker"`)
}

func TestTaskGoesOnWhileARunningAutopilotHoldsItsSlot(t *testing.T) {
	repo := t.TempDir()
	assert.False(t, TaskGoesOn(repo, "t-1"), "no autopilot")
	writeState(t, repo, "t-1")
	assert.False(t, TaskGoesOn(repo, "t-1"), "an autopilot that is not running")

	lock, err := AcquireLock(t.Context(), In(repo).AutopilotLock(), LockInfo{PID: os.Getpid()}, LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()
	writeFile(t, In(repo).AutopilotEvents(),
		`{"ts":"2026-11-22T10:00:00Z","topic":"autopilot.started","payload":{"runId":"20261122-100000"},"source":"ralph"}`+"\n")
	assert.True(t, TaskGoesOn(repo, "t-1"))
	assert.False(t, TaskGoesOn(repo, "t-2"), "a task in no slot")

	writeFile(t, In(repo).AutopilotEvents(),
		`{"ts":"2026-11-22T10:00:00Z","topic":"autopilot.started","payload":{"runId":"20261122-100000"},"source":"ralph"}`+"\n"+
			`{"ts":"2026-11-22T10:09:00Z","topic":"autopilot.stopped","payload":{"reason":"interrupted","resumable":true},"source":"ralph"}`+"\n")
	assert.False(t, TaskGoesOn(repo, "t-1"), "an autopilot that stopped, keeping its slots for its resume")
}

// A merged task's worktree goes; its loop's logs are kept first, every
// run oldest first, and TaskLog finds them once the worktree is gone.
func TestKeepTaskLogKeepsEveryRunOfAMergedTask(t *testing.T) {
	repo := t.TempDir()
	worktree := filepath.Join(repo, ".worktrees", "t-1")
	writeFile(t, filepath.Join(worktree, ".ralph", "events-20261122-101000.jsonl"), loopResumed+completed)
	// The first run was cut off mid-line by a kill.
	writeFile(t, filepath.Join(worktree, ".ralph", "events-20261122-100000.jsonl"), loopStarted+interrupted[:20])
	require.NoError(t, KeepTaskLog(repo, "t-1", worktree))

	kept := filepath.Join(repo, ".ralph", "tasks", "t-1", "loop-events.jsonl")
	data, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, loopStarted+interrupted[:20]+"\n"+loopResumed+completed, string(data))
	assert.NoFileExists(t, kept+".tmp")

	require.NoError(t, os.RemoveAll(worktree))
	path, remote, err := TaskLog(repo, "t-1")
	require.NoError(t, err)
	assert.False(t, remote)
	assert.Equal(t, kept, path)

	// A second clean-up, after a restart, finds no worktree: what was
	// kept stays.
	require.NoError(t, KeepTaskLog(repo, "t-1", worktree))
	again, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again))

	// A task of the same id that runs again is read from its worktree.
	writeFile(t, filepath.Join(worktree, ".ralph", "events-20261123-090000.jsonl"), loopStarted)
	path, _, err = TaskLog(repo, "t-1")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(worktree, ".ralph", "events-20261123-090000.jsonl"), path)
}

// The worktree is the agent's: a log there that is a link is not
// followed into the repository's .ralph/.
func TestKeepTaskLogRefusesALink(t *testing.T) {
	repo := t.TempDir()
	worktree := filepath.Join(repo, ".worktrees", "t-1")
	secret := filepath.Join(t.TempDir(), "secret")
	writeFile(t, secret, "not a log\n")
	require.NoError(t, os.MkdirAll(filepath.Join(worktree, ".ralph"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(worktree, ".ralph", "events-20261122-100000.jsonl")))
	require.Error(t, KeepTaskLog(repo, "t-1", worktree))
	assert.NoFileExists(t, filepath.Join(repo, ".ralph", "tasks", "t-1", "loop-events.jsonl"))
}

// The autopilot writes its state once a pass, after the pass's lines: a
// reader folds the log on from the state's offset, and reads a log whose
// run has not written its state yet.
func TestReadAutopilotStateFoldsTheLogPastItsOffset(t *testing.T) {
	repo := t.TempDir()
	_, err := ReadAutopilotState(repo)
	require.ErrorIs(t, err, ErrNoAutopilot)

	assigned := `{"ts":"2026-11-22T10:00:01Z","topic":"task.assigned","payload":{"task":"t-1","slot":"1","worktree":".worktrees/t-1","attempt":1},"source":"ralph"}` + "\n"
	writeFile(t, In(repo).AutopilotEvents(), assigned)
	st, err := ReadAutopilotState(repo)
	require.NoError(t, err, "a log with no state yet")
	assert.Equal(t, "t-1", st.Active["1"].Task)

	st.Offset = int64(len(assigned))
	data, err := json.Marshal(st)
	require.NoError(t, err)
	writeFile(t, In(repo).AutopilotState(), string(data))
	finished := `{"ts":"2026-11-22T10:00:02Z","topic":"task.finished","payload":{"task":"t-1","slot":"1","attempt":1},"source":"ralph"}` + "\n"
	writeFile(t, In(repo).AutopilotEvents(), assigned+finished)
	st, err = ReadAutopilotState(repo)
	require.NoError(t, err)
	assert.Empty(t, st.Active, "the finished task left its slot, as the log's tail says")
	require.Len(t, st.MergeQueue, 1)
	assert.Equal(t, "t-1", st.MergeQueue[0].Task)
}

// The autopilot reads how a loop it saw exit ended without asking who
// holds its lock: the run's end is the same as ReadStatus's, and the lock
// (held here by the test, as a child the loop left could) is not looked
// at.
func TestReadExitedStatusReadsTheEndWithoutTheLock(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".ralph/events-20261122-100000.jsonl"), loopStarted+builderStarted+builderDone+completed)
	writeFile(t, In(ws).CurrentEvents(), "events-20261122-100000.jsonl")
	st := NewRunState()
	st.RunID, st.EventsFile = "20261122-100000", ".ralph/events-20261122-100000.jsonl"
	st.Terminated = &Termination{Reason: "completed", At: time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC)}
	require.NoError(t, Checkpoint{Path: In(ws).State()}.Save(st, PhaseDone, time.Now()))
	lock, err := AcquireLock(t.Context(), In(ws).Lock(), LockInfo{PID: os.Getpid()}, LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()

	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	live, err := ReadStatus(ws, 0, now)
	require.NoError(t, err)
	exited, err := ReadExitedStatus(ws, 0, now)
	require.NoError(t, err)
	assert.True(t, live.Running)
	assert.False(t, exited.Running, "its process exited")
	require.NotNil(t, exited.Ended)
	assert.Equal(t, live.Ended, exited.Ended)
	assert.Equal(t, 0, exited.Ended.ExitCode)
}

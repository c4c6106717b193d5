package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// A task the autopilot ran here and failed keeps its worktree, whose loop
// log ralph events --task reads from the repository's root.
func TestEventsTaskReadsAFailedTasksWorktree(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: {type: checklist, path: TODO.md}\n  verify:\n    - {type: command_succeeds, command: \"test ! -e bad.txt\"}\n")
	w.write("TODO.md", "- [ ] Good\n- [ ] Bad\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(taskAgent("0"))
	r := w.ralph("autopilot", "--headless")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.DirExists(t, filepath.Join(w.dir, ".worktrees", "bad"))

	r = w.ralph("events", "--task", "bad", "--json", "--topic", "loop.*")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{runfiles.TopicLoopStarted, runfiles.TopicLoopTerminate}, jsonTopics(t, r.stdout))
	want, err := runfiles.CurrentLog(filepath.Join(w.dir, ".worktrees", "bad"))
	require.NoError(t, err)
	r = w.ralph("events", "--task", "bad", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, w.read(mustRel(t, w.dir, want)), r.stdout, "every line of the worktree's log")

	// The merged task's worktree is gone, but its log was kept, in the
	// repository's .ralph/, until the user removes it.
	assert.NoDirExists(t, filepath.Join(w.dir, ".worktrees", "good"))
	kept := filepath.Join(w.dir, ".ralph", runfiles.RemoteDir, "good", runfiles.KeptEventsFile)
	require.FileExists(t, kept)
	r = w.ralph("events", "--task", "good", "--json", "--topic", "loop.*")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{runfiles.TopicLoopStarted, runfiles.TopicLoopTerminate}, jsonTopics(t, r.stdout))
	r = w.ralph("events", "--task", "good")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "LOOP_COMPLETE")
	assert.Empty(t, git(t, w.dir, "status", "--porcelain", "--untracked-files=all", ".ralph"), "what is kept is no change of the checkout")

	require.NoError(t, os.RemoveAll(filepath.Dir(kept)))
	r = w.ralph("events", "--task", "good")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "no event log for task good")
	assert.Contains(t, r.stderr, "ralph autopilot status")
}

func mustRel(t *testing.T, base, path string) string {
	t.Helper()
	rel, err := filepath.Rel(base, path)
	require.NoError(t, err)
	return rel
}

// loopLine is a line of ralph's in a loop's log.
func loopLine(t *testing.T, topic, payload string) string {
	t.Helper()
	line, err := events.EncodeLine(events.Event{TS: time.Now().UTC(), Topic: topic, Payload: json.RawMessage(payload), Source: events.SourceRalph})
	require.NoError(t, err)
	return string(line)
}

func agentLine(t *testing.T, topic string) string {
	t.Helper()
	line, err := events.EncodeLine(events.Event{TS: time.Now().UTC(), Topic: topic, Payload: events.StringPayload("x"), Source: events.SourceAgent, Hat: "builder", Iteration: 1})
	require.NoError(t, err)
	return string(line)
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	for _, l := range lines {
		_, err := f.WriteString(l)
		require.NoError(t, err)
	}
}

// Following a remote task's copy goes on past the run a worker cut off
// while the running autopilot keeps the task in its slot, prints the next
// worker's lines as they arrive, and ends when the autopilot stops.
func TestEventsTaskFollowsARemoteTaskAcrossWorkers(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	mirror := runfiles.In(w.dir).RemoteEvents("t-1")
	require.NoError(t, os.MkdirAll(filepath.Dir(mirror), 0o755))
	appendLines(t, mirror, loopLine(t, runfiles.TopicLoopStarted, `{"run_id":"r1"}`), agentLine(t, "build.task"),
		loopLine(t, runfiles.TopicLoopTerminate, `{"reason":"interrupted","exit_code":130}`))
	require.NoError(t, runfiles.WriteWorkerInfo(w.dir, "t-1", runfiles.WorkerInfo{Worker: "build-3", Run: "r", Attempt: 1, Since: time.Now()}))
	ralphDir := filepath.Join(w.dir, runfiles.DirName)
	apLog := filepath.Join(ralphDir, runfiles.AutopilotEventsFile)
	appendLines(t, apLog, loopLine(t, runfiles.TopicAutopilotStarted, `{"runId":"r","parallel":1}`),
		loopLine(t, runfiles.TopicTaskAssigned, `{"task":"t-1","slot":"1","worktree":".worktrees/t-1","attempt":1}`))
	st := runfiles.AutopilotState{Version: 1, RunID: "r", Parallel: 1, Active: map[string]runfiles.TaskSlot{"1": {Task: "t-1", Worktree: ".worktrees/t-1", Attempt: 1}}}
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ralphDir, runfiles.AutopilotStateFile), data, 0o644))
	// This test stands in for the running autopilot.
	lock, err := runfiles.AcquireLock(t.Context(), filepath.Join(ralphDir, runfiles.AutopilotLockFile), runfiles.LockInfo{PID: os.Getpid()}, runfiles.LockOptions{})
	require.NoError(t, err)
	defer func() { _ = lock.Release() }()

	r := w.ralph("autopilot", "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `slot 1: t-1 .*, loop not running, on build-3\n`, r.stdout, "its worker's run was cut off")
	r = w.ralph("autopilot", "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var status runfiles.AutopilotStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &status))
	require.Len(t, status.Active, 1)
	assert.Equal(t, "build-3", status.Active[0].Worker)

	cmd, lines := startFollow(t, w.dir, "--task", "t-1", "--json", "--topic", "loop.*")
	for _, want := range []string{runfiles.TopicLoopStarted, runfiles.TopicLoopTerminate} {
		assert.Equal(t, want, lineTopic(t, nextLine(t, lines, followWait)))
	}
	appendLines(t, mirror, loopLine(t, runfiles.TopicLoopResumed, `{"run_id":"r1"}`), agentLine(t, "build.done"))
	assert.Equal(t, runfiles.TopicLoopResumed, lineTopic(t, nextLine(t, lines, followWait)), "the next worker's run")
	appendLines(t, mirror, loopLine(t, runfiles.TopicLoopTerminate, `{"reason":"stopped","exit_code":1}`))
	assert.Equal(t, runfiles.TopicLoopTerminate, lineTopic(t, nextLine(t, lines, followWait)))

	appendLines(t, apLog, loopLine(t, runfiles.TopicAutopilotStopped, `{"reason":"interrupted","exitCode":130,"resumable":true}`))
	assert.Equal(t, 0, waitExit(t, cmd, lines, followWait), "the autopilot stopped: no worker goes on")
}

// Following a remote task's copy without a running autopilot ends at its
// loop's end, as a local loop's does; lines appended before it arrive.
func TestEventsTaskFollowEndsWithTheRemoteLoop(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	mirror := runfiles.In(w.dir).RemoteEvents("t-1")
	require.NoError(t, os.MkdirAll(filepath.Dir(mirror), 0o755))
	appendLines(t, mirror, loopLine(t, runfiles.TopicLoopStarted, `{"run_id":"r1"}`), agentLine(t, "build.task"))

	cmd, lines := startFollow(t, w.dir, "--task", "t-1", "--json", "--topic", "build.*")
	assert.Equal(t, "build.task", lineTopic(t, nextLine(t, lines, followWait)))
	appendLines(t, mirror, agentLine(t, "review.task"), agentLine(t, "build.done"))
	assert.Equal(t, "build.done", lineTopic(t, nextLine(t, lines, followWait)), "review.task is filtered out")
	appendLines(t, mirror, loopLine(t, runfiles.TopicLoopTerminate, `{"reason":"interrupted","exit_code":130}`))
	assert.Equal(t, 0, waitExit(t, cmd, lines, followWait))
}

func lineTopic(t *testing.T, line string) string {
	t.Helper()
	ev, err := events.ParseLine([]byte(line))
	require.NoError(t, err, line)
	return ev.Topic
}

package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// A loop that ends because the worker asked it to stop at the end of its
// iteration (reason "stopped", exit 1) is handed back, not reported as a
// failure; what it left uncommitted is committed on top of its work and
// pushed as the work in progress another worker continues from.
func TestWorkerHandsBackAStoppedLoopWithItsUncommittedWork(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	const ackWait = 10 * time.Minute

	gate := make(chan struct{})
	first := newFakeRunner("a", 3, gate)
	first.stops, first.dirty = true, "notes.txt"
	cancelFirst, waitFirst := startWorker(t, workerSetup{conn: conn, ackWait: ackWait, url: url, host: "host-a", runner: first})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	loopA := nextLoop(t, first)
	gate <- struct{}{}
	require.Eventually(t, func() bool { return len(loopA.Commits()) == 1 }, long, 10*time.Millisecond)
	done := loopA.Commits()[0]
	require.Eventually(t, func() bool { return remoteRef(t, url, cluster.WIPRef("t-1")) == done }, long, 20*time.Millisecond)

	cancelFirst()
	require.ErrorIs(t, waitFirst(), context.Canceled)
	wip := remoteRef(t, url, cluster.WIPRef("t-1"))
	require.NotEqual(t, done, wip, "the uncommitted work is pushed in a commit of its own")
	assert.EqualValues(t, 1, queued(t, conn), "the task is back in the queue")
	assert.Zero(t, streamMsgs(t, conn, cluster.ResultsStream), "a task handed back has no result")

	second := newFakeRunner("b", 1, nil)
	startWorker(t, workerSetup{conn: conn, ackWait: ackWait, url: url, host: "host-b", runner: second})
	loopB := nextLoop(t, second)
	assert.True(t, loopB.job.Continued)
	assert.Equal(t, wip, loopB.start)
	assert.Equal(t, done, gittest.Run(t, loopB.job.Dir, "rev-parse", wip+"^"))
	assert.Equal(t, "ralph: work in progress of t-1, handed back by host-a",
		gittest.Run(t, loopB.job.Dir, "log", "-1", "--format=%s", wip))
	assert.Equal(t, "notes.txt", gittest.Run(t, loopB.job.Dir, "show", "--format=", "--name-only", wip),
		"only the loop's work: nothing of .ralph/")
	assert.Equal(t, "half done\n", string(must(os.ReadFile(filepath.Join(loopB.job.Dir, "notes.txt")))))

	r := nextResult(t, res)
	assert.Equal(t, "host-b", r.Worker)
	assert.Equal(t, 0, r.ExitCode)
	assert.Equal(t, wip, gittest.Run(t, loopB.job.Dir, "rev-parse", r.Head+"^"))
}

// A loop that ends on its own as the worker stops (it failed, say) is
// reported with its result, not handed back.
func TestWorkerReportsALoopThatEndedOnItsOwnWhileStopping(t *testing.T) {
	conn, ctx, url, base, res := workerFixture(t)
	loops := make(chan *stubLoop, 1)
	run := func(_ context.Context, job cluster.WorkerJob) (cluster.WorkerLoop, error) {
		l := newStubLoop(autopilot.LoopResult{ExitCode: 1, Reason: "consecutive_failures", Message: "3 agent failures in a row"}, 1)
		loops <- l
		return l, nil
	}
	cancel, wait := startWorker(t, workerSetup{conn: conn, ackWait: time.Minute, url: url, host: "host-1", run: run})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	<-loops
	cancel()
	require.ErrorIs(t, wait(), context.Canceled)
	r := nextResult(t, res)
	assert.Equal(t, 1, r.ExitCode)
	assert.Equal(t, "consecutive_failures", r.Reason)
	assert.Equal(t, "ralph/t-1", r.Branch)
}

// stubLoop is a loop that ends once it has been interrupted n times, with
// res, or with exit 130 when res is zero.
type stubLoop struct {
	res  autopilot.LoopResult
	need int

	mu   sync.Mutex
	n    int
	done chan struct{}
}

func newStubLoop(res autopilot.LoopResult, need int) *stubLoop {
	return &stubLoop{res: res, need: need, done: make(chan struct{})}
}

func (l *stubLoop) Stop(runfiles.StopMode) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if l.n == l.need {
		close(l.done)
	}
}

func (l *stubLoop) Interrupts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *stubLoop) Wait() autopilot.LoopResult {
	<-l.done
	if l.res == (autopilot.LoopResult{}) {
		return autopilot.LoopResult{ExitCode: 130, Reason: "interrupted", Message: "interrupted by a signal"}
	}
	return l.res
}

// When the worker's context ends, its loops are asked once to stop, at
// the end of their iteration; Hurry interrupts them a second time, now;
// their tasks are handed back.
func TestWorkerHurryInterruptsTheLoopsAgain(t *testing.T) {
	c := start(t, 1)
	conn := connect(t, c.URLs())
	ctx := testContext(t)
	url, base := gittest.SharedRemote(t)
	loops := make(chan *stubLoop, 1)
	run := func(_ context.Context, job cluster.WorkerJob) (cluster.WorkerLoop, error) {
		l := newStubLoop(autopilot.LoopResult{}, 2)
		loops <- l
		return l, nil
	}
	w, cancel, wait := startWorkerHandle(t, workerSetup{conn: conn, ackWait: time.Minute, url: url, host: "host-1", run: run})
	require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, workerTask("t-1", url, base)))
	l := <-loops
	cancel()
	require.Eventually(t, func() bool { return l.Interrupts() == 1 }, long, 10*time.Millisecond)
	select {
	case <-l.done:
		t.Fatal("one interrupt ended the loop")
	case <-time.After(100 * time.Millisecond):
	}
	w.Hurry()
	require.ErrorIs(t, wait(), context.Canceled)
	assert.Equal(t, 2, l.Interrupts())
	assert.EqualValues(t, 1, queued(t, conn), "the task is handed back")
	assert.Zero(t, streamMsgs(t, conn, cluster.ResultsStream))
}

// A task's own acceptance commands reach its loop, in a last config file
// after the config's criteria, only on a worker that trusts them.
func TestWorkerRunsTaskCommandsOnlyWhenTrusted(t *testing.T) {
	for _, trust := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trust], func(t *testing.T) {
			c := start(t, 1)
			conn := connect(t, c.URLs())
			ctx := testContext(t)
			url, base := gittest.SharedRemote(t)
			res := results(t, conn)
			runner := newFakeRunner("w", 1, nil)
			startWorker(t, workerSetup{conn: conn, ackWait: time.Minute, url: url, host: "host-1", runner: runner, trust: trust})

			task := workerTask("t-1", url, base)
			task.Configs = []cluster.ConfigFile{{Name: "ralph.yml", Data: []byte(
				"acceptance_criteria:\n  - type: command_succeeds\n    command: make lint\n")}}
			task.TaskCommands = []cluster.TaskCommand{{Name: "tests pass", Command: "go test ./..."}}
			require.NoError(t, cluster.PublishTask(ctx, conn.JetStream(), coordinatorKey, task))
			loop := nextLoop(t, runner)
			nextResult(t, res)
			if !trust {
				require.Len(t, loop.job.ConfigFiles, 1)
				data := string(must(os.ReadFile(loop.job.ConfigFiles[0])))
				assert.NotContains(t, data, "make lint")
				assert.NotContains(t, data, "go test")
				return
			}
			require.Len(t, loop.job.ConfigFiles, 2)
			last := loop.job.ConfigFiles[1]
			assert.Equal(t, "2-task-commands.yml", filepath.Base(last))
			data := string(must(os.ReadFile(last)))
			lint, tests := strings.Index(data, "make lint"), strings.Index(data, "go test ./...")
			require.True(t, lint >= 0 && tests >= 0, "both criteria:\n%s", data)
			assert.Less(t, lint, tests, "the config's criteria come first")
			assert.Contains(t, data, "tests pass")
			assert.Contains(t, data, "command_succeeds")
			require.NoError(t, cluster.ValidateConfigs([]cluster.ConfigFile{task.Configs[0], {Name: "2-task-commands.yml", Data: []byte(data)}}),
				"the overlay is a valid config")
		})
	}
}

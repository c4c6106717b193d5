package autopilot

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// holdingRunner is a fakeRunner whose Start, for a task in hold, waits
// until the test lets it go: a worktree or a loop slow to start.
type holdingRunner struct {
	*fakeRunner
	hold     map[string]chan struct{}
	starting chan string
}

func (r *holdingRunner) Start(ctx context.Context, job Job) (Handle, error) {
	if wait, ok := r.hold[job.Task]; ok {
		r.starting <- job.Task
		<-wait
	}
	return r.fakeRunner.Start(ctx, job)
}

// A task's launch (its worktree, its loop's start) holds neither another
// task's merge nor its close: the state machine goes on while it runs,
// and records the loop running once it has started.
func TestALaunchHoldsNoMerge(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	release := make(chan struct{})
	runner := &holdingRunner{fakeRunner: h.runner, hold: map[string]chan struct{}{"b": release}, starting: make(chan string, 1)}
	h.start(t.Context(), h.settings(2), runner)
	require.Equal(t, "b", recv(t, runner.starting, "b's launch"))
	h.loop().complete() // a's
	var seen []events.Event
	for {
		ev := <-h.events
		seen = append(seen, ev)
		if ev.Topic == runfiles.TopicTaskCompleted {
			break
		}
	}
	assert.Equal(t, "a", payloadOf(seen[len(seen)-1]).Task, "a merged and closed while b's loop is starting")
	for _, ev := range seen {
		p := payloadOf(ev)
		assert.False(t, ev.Topic == runfiles.TopicTaskRunning && p.Task == "b", "b is not running before its loop started")
	}
	close(release)
	h.loop().complete() // b's
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 2}, res)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, h.source.closed)
}

// An interrupt while a task's loop is starting leaves the task resumable:
// the loop, once started, is interrupted too, and the next run goes on
// with it.
func TestALaunchCutShortByAnInterruptIsResumed(t *testing.T) {
	h := newHarness(t, task("a", 1))
	release := make(chan struct{})
	runner := &holdingRunner{fakeRunner: h.runner, hold: map[string]chan struct{}{"a": release}, starting: make(chan string, 1)}
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	h.start(ctx, h.settings(1), runner)
	require.Equal(t, "a", recv(t, runner.starting, "a's launch"))
	interrupt()
	close(release)
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{ExitCode: 130, Resumable: true}, res)
	assert.Contains(t, h.topics(), runfiles.TopicTaskRunning, "the loop that started is recorded, to be resumed")

	again := &harness{t: t, repo: h.repo, source: h.source, runner: newFakeRunner(), events: make(chan events.Event, 1000), done: make(chan struct{})}
	again.start(t.Context(), again.settings(1))
	l := again.loop()
	assert.Equal(t, "a", l.job.Task)
	l.complete()
	res = again.wait()
	require.NoError(t, again.err)
	assert.Equal(t, Result{Completed: 1}, res)
	assert.Equal(t, map[string]int{"a": 1}, h.source.closed)
}

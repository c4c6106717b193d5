package autopilot

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/gittest"
	"github.com/ralph-loop/ralph/runfiles"
)

// cleaningRunner is a fakeRunner that keeps something of its own for each
// task (a TaskCleaner): its CleanUp, the last step of a task's clean-up,
// says which task it cleaned and, for a task in hold, waits until the
// test lets it go.
type cleaningRunner struct {
	*fakeRunner
	cleaned chan string
	hold    map[string]chan struct{}
}

func (r *cleaningRunner) CleanUp(_ context.Context, task string, _ bool) error {
	if wait, ok := r.hold[task]; ok {
		<-wait
	}
	r.cleaned <- task
	return nil
}

// failAfter bounds a wait that only a broken autopilot makes long.
const failAfter = 2 * time.Minute

// recv takes the next value of ch, failing the test when none comes: what
// it waits for never happens.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failAfter):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// A task's clean-up (its worktree's removal, its branch's deletion, what
// the runner keeps of it, a remote's refs for a cluster) holds neither
// the next task's start nor its merge: the state machine goes on while it
// runs, and the run ends once it is done.
func TestACleanUpHoldsNoOtherTask(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	release := make(chan struct{})
	runner := &cleaningRunner{fakeRunner: h.runner, cleaned: make(chan string, 10), hold: map[string]chan struct{}{"a": release}}
	h.start(t.Context(), h.settings(1), runner)
	h.loop().complete()
	recv(t, h.runner.started, "start of b").complete()
	completed := make(chan string, 2)
	go func() {
		for range 2 {
			completed <- payloadOf(h.next(runfiles.TopicTaskCompleted)).Task
		}
	}()
	assert.Equal(t, "a", recv(t, completed, "task.completed of a while its clean-up is held"))
	assert.Equal(t, "b", recv(t, completed, "b merged while a's clean-up runs"))
	select {
	case <-h.done:
		t.Fatal("the run ended before a's clean-up")
	default:
	}
	close(release)
	// One clean-up at a time: b's waited for a's.
	assert.Equal(t, []string{"a", "b"}, []string{recv(t, runner.cleaned, "a cleaned"), recv(t, runner.cleaned, "b cleaned")})
	res := h.wait()
	require.NoError(t, h.err)
	assert.Equal(t, Result{Completed: 2}, res)
	for _, id := range []string{"a", "b"} {
		assert.NoDirExists(t, filepath.Join(h.repo, ".worktrees", id), "worktree removed")
		assert.Empty(t, strings.TrimSpace(gittest.Run(t, h.repo, "branch", "--list", "ralph/"+id)), "branch removed")
	}
}

// A clean-up the autopilot was stopped in the middle of (killed: the task
// is completed, its worktree and branch still there) is done when the run
// goes on.
func TestACleanUpCutShortIsDoneWhenTheRunGoesOn(t *testing.T) {
	h := newHarness(t, task("a", 1), task("b", 2))
	runner := &cleaningRunner{fakeRunner: h.runner, cleaned: make(chan string, 10)}
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	h.start(ctx, h.settings(1), runner)
	h.loop().complete()
	h.next(runfiles.TopicTaskCompleted)
	require.Equal(t, "a", recv(t, runner.cleaned, "a cleaned"))
	h.loop() // b runs
	// What a kill in the middle of a's clean-up leaves.
	gittest.Run(t, h.repo, "worktree", "add", "-q", "-b", "ralph/a", filepath.Join(h.repo, ".worktrees", "a"), "HEAD")
	interrupt()
	require.Equal(t, Result{ExitCode: 130, Completed: 1, Resumable: true}, h.wait())

	again := &harness{t: t, repo: h.repo, source: h.source, runner: newFakeRunner(), events: make(chan events.Event, 1000), done: make(chan struct{})}
	runner = &cleaningRunner{fakeRunner: again.runner, cleaned: make(chan string, 10)}
	again.start(t.Context(), again.settings(1), runner)
	again.loop().complete()
	res := again.wait()
	require.NoError(t, again.err)
	assert.Equal(t, Result{Completed: 2}, res)
	assert.ElementsMatch(t, []string{"a", "b"}, []string{recv(t, runner.cleaned, "a cleaned again"), recv(t, runner.cleaned, "b cleaned")})
	assert.NoDirExists(t, filepath.Join(h.repo, ".worktrees", "a"), "worktree removed")
	assert.Empty(t, strings.TrimSpace(gittest.Run(t, h.repo, "branch", "--list", "ralph/a")), "branch removed")
}

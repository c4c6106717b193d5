package autopilot

import (
	"context"
	"os"
	"sync"

	"github.com/ralph-loop/ralph/runfiles"
)

// ConcurrentStarts is a Runner whose Start may be called from several
// goroutines at once: the autopilot then makes a task's worktree and
// starts its loop off the state machine's goroutine (launcher), so the
// next merge and the next claims go on meanwhile.
type ConcurrentStarts interface {
	StartsConcurrently() bool
}

// StartsConcurrently says a LocalRunner's Start may run concurrently: it
// only starts a child process.
func (LocalRunner) StartsConcurrently() bool { return true }

// launching is one task's launch: what the state machine decided
// (where, which attempt, the job but for what the worktree decides),
// and, once it has run, its loop or why it could not start.
type launching struct {
	slot    string
	task    string
	attempt int
	job     Job
	// start is the commit a new worktree starts from (startPoint).
	start string

	h Handle
	// failed is why the task could not be started, "" when it was.
	failed string
}

// runLaunch makes the task's worktree when missing, and starts its loop; it
// touches nothing of the state machine's, so it may run in a goroutine
// of its own.
func (a *Autopilot) runLaunch(ctx context.Context, l *launching) {
	if err := a.ensureWorktree(ctx, l.task, l.start); err != nil {
		l.failed = "making its worktree failed: " + err.Error()
		return
	}
	if l.job.Mode == runfiles.StartResume {
		if state, _ := inspectLoop(l.job.Dir); state == loopNone {
			// Cut off before its run began: there is nothing to resume.
			l.job.Mode = runfiles.StartNew
			if l.attempt > 1 {
				l.job.Mode = runfiles.StartFresh
			}
		}
	}
	pin, err := a.pinIn(l.job.Dir)
	if err != nil {
		l.failed = err.Error()
		return
	}
	l.job.Pin = pin
	h, err := a.opts.Runner.Start(a.runnerCtx, l.job)
	if err != nil {
		l.failed = "starting its loop failed: " + err.Error()
		return
	}
	l.h = h
}

// launcher runs launches in goroutines of their own and reports each
// back to the state machine. Worktrees are made one at a time, as git
// takes its worktree commands in turn anyway (git.lockWorktrees); what
// the state machine does meanwhile is its own.
type launcher struct {
	done chan *launching
	// pending holds the tasks whose launch is under way; only the state
	// machine's goroutine reads or changes it.
	pending map[string]bool
	// quit, closed, drops the outcomes nobody will take: the run ended
	// on an error before its loop did. A loop started meanwhile is found
	// running by the next run's reconcile, as after a kill.
	quit chan struct{}
	wg   sync.WaitGroup
}

func newLauncher() *launcher {
	return &launcher{done: make(chan *launching), pending: map[string]bool{}, quit: make(chan struct{})}
}

// stop waits for the launches under way, dropping their outcomes.
func (l *launcher) stop() {
	close(l.quit)
	l.wg.Wait()
}

// launch makes the task's worktree, when missing, and starts its loop:
// in a goroutine when the runner allows it (ConcurrentStarts), with the
// outcome taken by launched. Its task stays in its slot, assigned, until
// then; a kill meanwhile leaves it for reconcile, as before its loop
// started.
func (a *Autopilot) launch(ctx context.Context, slot, task string, attempt int, mode runfiles.StartMode) error {
	job, err := a.job(task, attempt, mode)
	if err == nil {
		// Here, so that launches under way need not share it.
		err = a.knowCommonDir(ctx)
	}
	if err != nil {
		return a.failAssign(ctx, task, "", err.Error())
	}
	l := &launching{slot: slot, task: task, attempt: attempt, job: job, start: "refs/heads/" + a.base}
	if _, statErr := os.Lstat(job.Dir); statErr != nil {
		// Asked only for a new worktree: with deliver: pr it is a fetch.
		l.start = a.startPoint(ctx)
	}
	if c, ok := a.opts.Runner.(ConcurrentStarts); !ok || !c.StartsConcurrently() {
		a.runLaunch(ctx, l)
		return a.launched(ctx, l)
	}
	a.launcher.pending[task] = true
	a.launcher.wg.Add(1)
	go func() {
		defer a.launcher.wg.Done()
		lctx, cancel := steady(a.runnerCtx)
		defer cancel()
		a.runLaunch(lctx, l)
		select {
		case a.launcher.done <- l:
		case <-a.launcher.quit:
		}
	}()
	return nil
}

// launched records the outcome of a launch: its loop running, watched,
// or its task failed. A loop that started after the run was interrupted
// is interrupted too, and stays resumable.
func (a *Autopilot) launched(ctx context.Context, l *launching) error {
	delete(a.launcher.pending, l.task)
	if l.failed != "" {
		return a.failAssign(ctx, l.task, "", l.failed)
	}
	a.watch(l.slot, l.task, l.attempt, l.h)
	if a.interrupted {
		l.h.Interrupt()
	}
	// Unsynced: it follows the loop's start, which a restart that never
	// saw it finds (reconcile).
	if err := a.journal.recordUnsynced(runfiles.TopicTaskRunning, runfiles.AutopilotPayload{Task: l.task, Slot: l.slot, PID: l.h.PID(), Attempt: l.attempt}); err != nil {
		return err
	}
	a.fault(FaultRunning)
	return nil
}

package autopilot

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/ralph-loop/ralph/runfiles"
)

// cleaner removes finished tasks' worktrees and branches in goroutines of
// its own, so the state machine goes on to the next merge and the next
// task meanwhile: a worktree's removal deletes every file its loop left,
// and a branch's deletion locks git's packed refs, which together cost a
// task more than its merge. Nothing waits on a clean-up: the task is
// merged and closed before it starts, and a clean-up a kill cut short is
// done again when the run goes on (cleanLeftovers).
type cleaner struct {
	// one runs the clean-ups one at a time: they would contend for the
	// same locks of git's.
	one sync.Mutex
	wg  sync.WaitGroup

	mu sync.Mutex
	// ended counts the clean-ups that ended and notes holds what failed
	// in them, until the state machine takes them.
	ended int
	notes []string
	// done is told when a clean-up ends.
	done chan struct{}

	// pending counts the clean-ups started and not yet taken; only the
	// state machine's goroutine reads or changes it.
	pending int
}

func newCleaner() *cleaner { return &cleaner{done: make(chan struct{}, 1)} }

// start runs clean in a goroutine; what it returns are the failures a
// person should know of.
func (c *cleaner) start(clean func() []string) {
	c.pending++
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.one.Lock()
		notes := clean()
		c.one.Unlock()
		c.mu.Lock()
		c.ended++
		c.notes = append(c.notes, notes...)
		c.mu.Unlock()
		select {
		case c.done <- struct{}{}:
		default: // told already; take gets every ended one
		}
	}()
}

// take returns what the clean-ups that ended since the last take failed
// at, and counts them off pending.
func (c *cleaner) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending -= c.ended
	notes := c.notes
	c.ended, c.notes = 0, nil
	return notes
}

// wait waits for every clean-up started to end.
func (c *cleaner) wait() { c.wg.Wait() }

// cleanUp removes a finished task's worktree and branch, off the state
// machine's goroutine; what cannot be removed is reported, not fatal.
// keepBranch keeps the task's branch on the remote: an open pull
// request's.
func (a *Autopilot) cleanUp(task string, keepBranch bool) {
	a.cleaner.start(func() []string {
		// Its own steady context: the step that started it has ended.
		ctx, cancel := steady(a.runnerCtx)
		defer cancel()
		return a.removeTask(ctx, task, keepBranch)
	})
}

// removeTask keeps the loop log of task, then resets its worktree and
// keeps it for the next task (spares), or removes it, and removes its
// branch and what the runner keeps of it; it returns what failed.
func (a *Autopilot) removeTask(ctx context.Context, task string, keepBranch bool) []string {
	var notes []string
	if err := runfiles.KeepTaskLog(a.opts.Repo, task, a.worktree(task)); err != nil {
		notes = append(notes, fmt.Sprintf("keeping the loop log of %s failed: %v; it goes with its worktree", task, err))
	}
	if !a.spareTask(ctx, task) {
		if err := a.repo.RemoveWorktree(ctx, a.worktree(task)); err != nil {
			notes = append(notes, fmt.Sprintf("removing the worktree of %s failed: %v", task, err))
		}
	}
	if err := a.repo.DeleteBranch(ctx, branchOf(task)); err != nil {
		notes = append(notes, fmt.Sprintf("deleting %s failed: %v", branchOf(task), err))
	}
	if c, ok := a.opts.Runner.(TaskCleaner); ok {
		if err := c.CleanUp(ctx, task, keepBranch); err != nil {
			notes = append(notes, fmt.Sprintf("cleaning up after %s failed: %v", task, err))
		}
	}
	return notes
}

// cleanedUp records what the clean-ups that ended failed at.
func (a *Autopilot) cleanedUp() error {
	for _, note := range a.cleaner.take() {
		if err := a.notice(note); err != nil {
			return err
		}
	}
	return nil
}

// cleanLeftovers cleans up again after the tasks this run completed whose
// worktree or branch is still there: the autopilot was killed while it
// removed them. A task delivered as a pull request keeps its branch on
// the remote, which may be the head of one still open.
func (a *Autopilot) cleanLeftovers(ctx context.Context) error {
	done := a.state().Completed
	if len(done) == 0 {
		return nil
	}
	branches, err := a.repo.Branches(ctx, TaskBranchPrefix)
	if err != nil {
		return fmt.Errorf("list the tasks' branches: %w", err)
	}
	for _, o := range done {
		_, statErr := os.Lstat(a.worktree(o.Task))
		if statErr == nil || slices.Contains(branches, branchOf(o.Task)) {
			a.cleanUp(o.Task, o.URL != "")
		}
	}
	return nil
}

package autopilot

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ralph-loop/ralph/runfiles"
)

// reconcile brings an unfinished run back in step with the world after a
// restart: for each task the state has in a slot, a loop still running is
// re-attached, one that ended is acted on as if just seen ending, one cut
// off is resumed, and one never started is started. Merges need nothing
// here: a merge's scratch worktree is made anew, and a verified merge
// checks the base branch before it moves it.
func (a *Autopilot) reconcile(ctx context.Context) error {
	st := a.state()
	for _, slot := range slices.Sorted(maps.Keys(st.Active)) {
		s := st.Active[slot]
		if err := a.reconcileSlot(ctx, slot, s); err != nil {
			return err
		}
	}
	return nil
}

func (a *Autopilot) reconcileSlot(ctx context.Context, slot string, s runfiles.TaskSlot) error {
	if err := a.ensureTaskFiles(ctx, s.Task); err != nil {
		return a.failTask(ctx, s.Task, err.Error())
	}
	dir := a.worktree(s.Task)
	if _, err := os.Stat(dir); err != nil {
		// Assigned, but the autopilot stopped before the loop started;
		// the claim may not have been made either, and repeating it is
		// harmless.
		if claimed, err := a.claim(ctx, s.Task, s.Title); err != nil || !claimed {
			return err
		}
		return a.launch(ctx, slot, s.Task, s.Attempt, runfiles.StartNew)
	}
	state, res := inspectLoop(dir)
	if state == loopRunning {
		h, err := a.opts.Runner.Attach(a.runnerCtx, dir)
		if err == nil {
			a.watch(slot, s.Task, s.Attempt, h)
			return a.notice(fmt.Sprintf("re-attached to the loop of %s (pid %d), still running", s.Task, h.PID()))
		}
		// It ended between the two looks: look again.
		state, res = inspectLoop(dir)
	}
	switch state {
	case loopEnded:
		return a.loopEnded(ctx, slotResult{slot: slot, task: s.Task, attempt: s.Attempt, res: res})
	case loopCut, loopRunning:
		return a.launch(ctx, slot, s.Task, s.Attempt, runfiles.StartResume)
	case loopNone:
	}
	mode := runfiles.StartNew
	if s.Attempt > 1 {
		mode = runfiles.StartFresh
	}
	return a.launch(ctx, slot, s.Task, s.Attempt, mode)
}

// ensureTaskFiles writes a task's objective and overlay when a restart
// finds them missing.
func (a *Autopilot) ensureTaskFiles(ctx context.Context, task string) error {
	if _, err := os.Stat(filepath.Join(a.taskDir(task), runfiles.OverlayFile)); err == nil {
		return nil
	}
	t, err := a.opts.Source.Show(ctx, task)
	if err != nil {
		return fmt.Errorf("read the task from %s: %w", a.opts.Source.Name(), err)
	}
	return a.writeTaskFiles(t, "")
}

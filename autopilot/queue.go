package autopilot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
)

// nextMerge starts preparing the first queued merge when none is under
// way. A merge whose result was already verified (a restart between the
// verification and the move of the base branch) is finished instead.
func (a *Autopilot) nextMerge(ctx context.Context) {
	if a.merging != "" || a.fatal != nil || a.interrupted {
		return
	}
	for _, m := range a.state().MergeQueue {
		if m.Step == MergeDone {
			// Landed, completed or failed, m has left the queue or gone
			// back to it to be made again (or the run is ending): the
			// rest of the queue goes on now, as nothing else may come to
			// wake the autopilot up.
			a.check(a.land(ctx, m))
			a.nextMerge(ctx)
			return
		}
	}
	if len(a.state().MergeQueue) == 0 {
		return
	}
	m := a.state().MergeQueue[0]
	if err := a.journal.record(TopicMergeStarted, Payload{Task: m.Task, Title: m.Title, Branch: m.Branch}); err != nil {
		a.check(err)
		return
	}
	a.merging = m.Task
	msg := git.WithTaskTrailer(fmt.Sprintf("ralph: merge %s (%s)", m.Task, m.Title), m.Task)
	go func() {
		res, err := a.merger.prepare(ctx, m, msg)
		a.mergeDone <- mergeDone{task: m, res: res, err: err}
	}()
}

// merged acts on a prepared merge: a verified result lands on the base
// branch; a conflict sends the task back to its loop while retries
// remain; a failed verification or an error fails the task, the base
// branch untouched.
func (a *Autopilot) merged(ctx context.Context, d mergeDone) error {
	a.merging = ""
	m, res := d.task, d.res
	switch {
	case d.err != nil && a.interrupted:
		// The interrupt cut the merge short; the next run makes it again.
		return a.journal.record(TopicMergeFailed, Payload{Task: m.Task, Reason: "interrupted; it is made again when the autopilot resumes"})
	case d.err != nil:
		if err := a.journal.record(TopicMergeFailed, Payload{Task: m.Task, Reason: d.err.Error()}); err != nil {
			return err
		}
		return a.failTask(ctx, m.Task, "its merge failed: "+d.err.Error())
	case len(res.Conflicts) > 0:
		return a.conflicted(ctx, m, res)
	case len(res.Failed) > 0:
		reason := "verification of the merged result failed: " + evidence(res.Failed)
		if err := a.journal.record(TopicVerifyFailed, Payload{Task: m.Task, Base: res.Base, Reason: reason}); err != nil {
			return err
		}
		return a.failTask(ctx, m.Task, reason)
	}
	if res.Already != "" {
		msg := fmt.Sprintf("%s is already merged into %s by %s (its %s trailer); it is not merged again", m.Task, a.base, shortHash(res.Already), git.TaskTrailer)
		if err := a.notice(msg); err != nil {
			return err
		}
	}
	if err := a.journal.record(TopicMergeDone, Payload{Task: m.Task, Base: res.Base, Commit: res.Commit, Checks: len(a.merger.verify)}); err != nil {
		return err
	}
	m.Step, m.Base, m.Commit = MergeDone, res.Base, res.Commit
	a.fault(FaultMerged)
	return a.land(ctx, m)
}

// land moves the base branch to a verified merge, closes the task and
// removes its worktree and branch. Each step checks whether it was already
// done, so a restart part-way through repeats none of them.
func (a *Autopilot) land(ctx context.Context, m Merge) error {
	ok, err := a.merger.advance(ctx, m.Base, m.Commit)
	var inTheWay *git.OverwriteError
	if errors.As(err, &inTheWay) {
		return a.blockedLand(m, inTheWay)
	}
	if err != nil {
		return a.failTask(ctx, m.Task, err.Error())
	}
	if !ok {
		// The base branch moved since the merge was made: it goes back
		// to the queue, to be made again on the new tip.
		return a.journal.record(TopicMergeFailed, Payload{Task: m.Task, Base: m.Base, Requeued: true,
			Reason: a.base + " moved since the merge was made; merging again"})
	}
	a.fault(FaultAdvanced)
	if err := a.closeTask(ctx, m); err != nil {
		return err
	}
	a.fault(FaultClosed)
	a.cleanUp(ctx, m.Task)
	return a.journal.record(TopicTaskCompleted, Payload{Task: m.Task, Title: m.Title, Commit: m.Commit})
}

// closeTask closes the task in its source, unless the source already has
// it closed (a restart after the close).
func (a *Autopilot) closeTask(ctx context.Context, m Merge) error {
	if t, err := a.opts.Source.Show(ctx, m.Task); err == nil && t.Closed {
		return nil
	}
	reason := fmt.Sprintf("merged into %s by ralph autopilot as %s", a.base, shortHash(m.Commit))
	if err := a.opts.Source.Close(ctx, m.Task, reason); err != nil {
		return a.notice(fmt.Sprintf("%s is merged, but closing it in %s failed: %v", m.Task, a.opts.Source.Name(), err))
	}
	return a.commitTracker(ctx, "ralph: close "+m.Task)
}

// cleanUp removes a finished task's worktree and branch; what cannot be
// removed is reported, not fatal.
func (a *Autopilot) cleanUp(ctx context.Context, task string) {
	if err := a.repo.RemoveWorktree(ctx, a.worktree(task)); err != nil {
		_ = a.notice(fmt.Sprintf("removing the worktree of %s failed: %v", task, err))
	}
	if err := a.repo.DeleteBranch(ctx, branchOf(task)); err != nil {
		_ = a.notice(fmt.Sprintf("deleting %s failed: %v", branchOf(task), err))
	}
	if c, ok := a.opts.Runner.(TaskCleaner); ok {
		if err := c.CleanUp(ctx, task); err != nil {
			_ = a.notice(fmt.Sprintf("cleaning up after %s failed: %v", task, err))
		}
	}
}

// conflicted sends a task whose merge conflicted back to its loop, on its
// branch brought up to the new base, while retries remain.
func (a *Autopilot) conflicted(ctx context.Context, m Merge, res mergeResult) error {
	files := strings.Join(res.Conflicts, ", ")
	if err := a.journal.record(TopicMergeFailed, Payload{Task: m.Task, Base: res.Base, Files: res.Conflicts,
		Reason: "conflict in " + files}); err != nil {
		return err
	}
	if m.Attempt > a.opts.Settings.Retries {
		return a.failTask(ctx, m.Task, fmt.Sprintf("its merge into %s conflicts in %s, and no retry is left (autopilot.retries: %d)",
			a.base, files, a.opts.Settings.Retries))
	}
	note, err := a.bringUpToDate(ctx, m, res.Conflicts)
	if err != nil {
		return a.failTask(ctx, m.Task, "bringing its branch up to date failed: "+err.Error())
	}
	t, err := a.opts.Source.Show(ctx, m.Task)
	if err != nil {
		t.ID, t.Title = m.Task, m.Title
	}
	if err := a.writeTaskFiles(t, note); err != nil {
		return a.failTask(ctx, m.Task, err.Error())
	}
	return a.journal.record(TopicTaskRetry, Payload{Task: m.Task, Title: m.Title, Attempt: m.Attempt + 1, Files: res.Conflicts})
}

// bringUpToDate rebases the task's branch on the base branch. When the
// rebase conflicts, the base branch is merged into the task's branch
// instead, and the conflicts are left for the task's loop to resolve.
// It returns what the loop is told.
func (a *Autopilot) bringUpToDate(ctx context.Context, m Merge, conflicts []string) (string, error) {
	wt := git.Repo{Dir: a.worktree(m.Task)}
	files := strings.Join(conflicts, ", ")
	rebaseConflicts, err := wt.Rebase(ctx, a.base)
	if err != nil {
		return "", err
	}
	if len(rebaseConflicts) == 0 {
		return fmt.Sprintf("This task's work was done, but merging it into %s conflicted with work merged since, in %s. "+
			"The branch has been rebased onto %s. Check that the task is still done on top of the new work, fix what the other changes broke, and commit.",
			a.base, files, a.base), nil
	}
	res, err := wt.MergeNoCommit(ctx, a.base, false)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("This task's work was done, but merging it into %s conflicted with work merged since. "+
		"%s has been merged into this branch, with conflicts in: %s. Resolve the conflict markers in those files, "+
		"keeping what both sides meant, make sure the task is still done, and commit.",
		a.base, a.base, strings.Join(res.Conflicts, ", ")), nil
}

// startRetry runs the loop of a task whose merge conflicted again, as a
// fresh run in its worktree.
func (a *Autopilot) startRetry(ctx context.Context, r Slot, slot string) error {
	p := Payload{Task: r.Task, Title: r.Title, Slot: slot, Worktree: r.Worktree, Branch: r.Branch,
		Attempt: r.Attempt, Components: r.Components}
	if err := a.journal.record(TopicTaskAssigned, p); err != nil {
		return err
	}
	return a.launch(ctx, slot, r.Task, r.Attempt, StartFresh)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

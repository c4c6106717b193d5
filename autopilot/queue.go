package autopilot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// nextMerge starts preparing the first queued merge when none is under
// way. A merge whose result was already verified (a restart between the
// verification and the move of the base branch) is finished instead.
func (a *Autopilot) nextMerge(ctx context.Context) {
	for a.merging == "" && a.fatal == nil && !a.interrupted {
		if m, ok := a.verifiedMerge(); ok {
			// Landing it takes it off the queue (or sends it back to be
			// made again); the queue's next merge starts in turn, as no
			// event may come to start it.
			a.check(a.land(ctx, m))
			continue
		}
		if len(a.state().MergeQueue) > 0 {
			a.startMerge(ctx, a.state().MergeQueue[0], "")
		}
		return
	}
}

// verifiedMerge is a merge of the queue that was verified but has not
// landed (a restart between the two).
func (a *Autopilot) verifiedMerge() (runfiles.TaskMerge, bool) {
	for _, m := range a.state().MergeQueue {
		if m.Step == runfiles.MergeDone || m.Step == runfiles.MergePushed {
			return m, true
		}
	}
	return runfiles.TaskMerge{}, false
}

// startMerge prepares m's merge in a goroutine, which reports on
// mergeDone: on the base branch's tip, or with onto on that commit (a
// verified merge not landed yet, see chainNext).
func (a *Autopilot) startMerge(ctx context.Context, m runfiles.TaskMerge, onto string) {
	// Unsynced: a merge whose start a restart never saw is made again, as
	// is one cut off in the middle.
	if err := a.journal.recordUnsynced(runfiles.TopicMergeStarted, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Branch: m.Branch}); err != nil {
		a.check(err)
		return
	}
	a.merging = m.Task
	msg := git.WithTaskTrailer(git.MergeSubject(m.Task, m.Title), m.Task)
	go func() {
		res, err := a.merger.prepare(ctx, m, msg, onto)
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
	ctx, cancel := steady(ctx)
	defer cancel()
	if d.err != nil || len(res.Conflicts)+len(res.Markers)+len(res.Failed) > 0 || res.Already != "" {
		// The verified merges this one was made on land first, whatever
		// becomes of it: a retry is brought up to date on them, and an
		// interrupt leaves no verified merge behind.
		if err := a.landTogether(ctx); err != nil {
			return err
		}
	}
	switch {
	case d.err != nil && (a.interrupted || errors.Is(d.err, context.Canceled)):
		// The interrupt cut the merge short; the next run makes it again.
		return a.journal.record(runfiles.TopicMergeFailed, runfiles.AutopilotPayload{Task: m.Task, Reason: "interrupted; it is made again when the autopilot resumes"})
	case errors.As(d.err, new(*DeliveryError)):
		// The remote's fault, not the task's: the merge waits in the
		// queue for the next run.
		if err := a.requeue(m, d.err.Error()); err != nil {
			return err
		}
		return d.err
	case d.err != nil:
		if err := a.journal.record(runfiles.TopicMergeFailed, runfiles.AutopilotPayload{Task: m.Task, Reason: d.err.Error()}); err != nil {
			return err
		}
		return a.failTask(ctx, m.Task, "its merge failed: "+d.err.Error())
	case len(res.Conflicts) > 0:
		return a.conflicted(ctx, m, res)
	case len(res.Markers) > 0:
		return a.unresolved(ctx, m, res)
	case len(res.Failed) > 0:
		reason := "verification of the merged result failed: " + evidence(res.Failed)
		if err := a.journal.record(runfiles.TopicVerifyFailed, runfiles.AutopilotPayload{Task: m.Task, Base: res.Base, Reason: reason}); err != nil {
			return err
		}
		return a.failTask(ctx, m.Task, reason)
	}
	if res.Already != "" {
		where := a.base
		if a.merger.deliver.remotely() {
			where = a.merger.deliver.remote + "/" + a.base
		}
		msg := fmt.Sprintf("%s is already merged into %s by %s (its %s trailer); it is not merged again", m.Task, where, shortHash(res.Already), git.TaskTrailer)
		if err := a.notice(msg); err != nil {
			return err
		}
		if a.merger.deliver.mode == deliverPR {
			// Nothing is left to deliver: the remote's base branch has it.
			return a.complete(ctx, m, res.Already)
		}
	}
	p := runfiles.AutopilotPayload{Task: m.Task, Base: res.Base, Commit: res.Commit, Checks: len(a.merger.verify), Verified: res.Verified}
	if a.merger.deliver.remotely() {
		p.Remote, p.Lease = a.merger.deliver.remote, res.Lease
	}
	if err := a.journal.record(runfiles.TopicMergeDone, p); err != nil {
		return err
	}
	m.Step, m.Base, m.Commit, m.Remote, m.Lease, m.Verified = runfiles.MergeDone, res.Base, res.Commit, p.Remote, p.Lease, p.Verified
	a.mergedHere[m.Task] = true
	a.fault(FaultMerged)
	a.landing = append(a.landing, m)
	if next, ok := a.chainNext(); ok {
		a.startMerge(ctx, next, m.Commit)
		return nil
	}
	return a.landTogether(ctx)
}

// chainNext is the queued merge to make on the verified merges waiting to
// land, rather than land them first: when nothing runs on a merge
// (no verify) and it lands on the local base branch, a task that finished
// while the last one merged is merged on its result, and the base branch
// moves once for all of them, with one commit of their closes. At most
// as many wait as there are slots. A restart lands each one recorded
// merged on its own, on the one it was made on (merge.done's base).
func (a *Autopilot) chainNext() (runfiles.TaskMerge, bool) {
	if len(a.merger.verify) > 0 || a.merger.mode == "rebase" || a.merger.deliver.remotely() ||
		a.interrupted || a.fatal != nil || len(a.landing) >= max(a.opts.Settings.Parallel, 1) {
		return runfiles.TaskMerge{}, false
	}
	for _, q := range a.state().MergeQueue {
		if q.Step == runfiles.MergeQueued {
			return q, true
		}
	}
	return runfiles.TaskMerge{}, false
}

// landTogether lands the verified merges waiting to, each made on the one
// before: the base branch moves to the last by one fast-forward, and
// their closes are committed once. Where the base branch moved since the
// first was made, each lands on its own, which sends it back to the
// queue.
func (a *Autopilot) landTogether(ctx context.Context) error {
	batch := a.landing
	a.landing = nil
	switch len(batch) {
	case 0:
		return nil
	case 1:
		return a.land(ctx, batch[0])
	}
	first, last := batch[0], batch[len(batch)-1]
	ok, err := a.merger.advance(ctx, first.Base, last.Commit)
	var inTheWay *git.OverwriteError
	if errors.As(err, &inTheWay) {
		return a.blockedLand(first, inTheWay)
	}
	if err != nil {
		return fmt.Errorf("land the verified merges of %s: %w", taskNames(batch), err)
	}
	if !ok {
		for _, m := range batch {
			if err := a.land(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
	a.fault(FaultAdvanced)
	return a.completeAll(ctx, batch)
}

func taskNames(ms []runfiles.TaskMerge) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Task
	}
	return strings.Join(names, ", ")
}

// land moves the base branch to a verified merge, closes the task and
// removes its worktree and branch. Each step checks whether it was already
// done, so a restart part-way through repeats none of them.
func (a *Autopilot) land(ctx context.Context, m runfiles.TaskMerge) error {
	ctx, cancel := steady(ctx)
	defer cancel()
	if a.merger.deliver.mode == deliverPR {
		return a.deliverPR(ctx, m)
	}
	if m.Remote != "" {
		if pushed, err := a.pushBase(ctx, m); err != nil || !pushed {
			return err
		}
	}
	ok, err := a.merger.advance(ctx, m.Base, m.Commit)
	var inTheWay *git.OverwriteError
	if errors.As(err, &inTheWay) {
		return a.blockedLand(m, inTheWay)
	}
	if err != nil {
		// The task's work is verified; what failed is the checkout or
		// git. The merge stays in the queue, the run ends (resumable),
		// and the next one lands it.
		return fmt.Errorf("land the verified merge of %s: %w", m.Task, err)
	}
	if !ok {
		// The base branch moved since the merge was made: it goes back
		// to the queue, to be made again on the new tip.
		return a.journal.record(runfiles.TopicMergeFailed, runfiles.AutopilotPayload{Task: m.Task, Base: m.Base, Requeued: true,
			Reason: a.base + " moved since the merge was made; merging again"})
	}
	a.fault(FaultAdvanced)
	return a.complete(ctx, m, m.Commit)
}

// complete closes a task whose merge, commit, is on the base branch,
// records it completed and starts the removal of its worktree and branch.
func (a *Autopilot) complete(ctx context.Context, m runfiles.TaskMerge, commit string) error {
	m.Commit = commit
	return a.completeAll(ctx, []runfiles.TaskMerge{m})
}

// completeAll is complete for merges now on the base branch, each at its
// Commit, with one commit of the tracker's files for all their closes.
func (a *Autopilot) completeAll(ctx context.Context, ms []runfiles.TaskMerge) error {
	closed := make([]bool, len(ms))
	var changed []string
	for i, m := range ms {
		a.merges[m.Task] = m.Commit
		var err error
		var now bool
		if closed[i], now, err = a.closeOnly(ctx, m.Task, a.mergedReason(m.Commit)); err != nil {
			return err
		}
		if now {
			changed = append(changed, m.Task)
		}
	}
	if len(changed) > 0 {
		if err := a.commitTracker(ctx, "ralph: close "+strings.Join(changed, ", ")); err != nil {
			return err
		}
	}
	a.fault(FaultClosed)
	for i, m := range ms {
		a.cleanUp(m.Task, false)
		p := runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Commit: m.Commit, Unclosed: !closed[i]}
		// Unsynced: a restart that never saw it lands the verified merge
		// again, which finds the base branch moved and the task closed.
		if err := a.journal.recordUnsynced(runfiles.TopicTaskCompleted, p); err != nil {
			return err
		}
		a.landed.apply(runfiles.TopicTaskCompleted, p)
	}
	return nil
}

// mergedReason is what the tracker is told of a task merged by commit.
func (a *Autopilot) mergedReason(commit string) string {
	reason := fmt.Sprintf("merged into %s by ralph autopilot as %s", a.base, shortHash(commit))
	if a.merger.deliver.mode == deliverPush {
		reason += ", pushed to " + a.merger.deliver.remote
	}
	return reason
}

// closeTask closes task, done as reason says, in its source, unless the
// source already has it closed (a restart after the close), and commits
// the tracker's files. A close the source refuses is reported, and
// closed is false.
func (a *Autopilot) closeTask(ctx context.Context, task, reason string) (closed bool, err error) {
	closed, now, err := a.closeOnly(ctx, task, reason)
	if err != nil || !now {
		return closed, err
	}
	return true, a.commitTracker(ctx, "ralph: close "+task)
}

// closeOnly is closeTask without the commit of the tracker's files: now
// says whether the source was changed, and they are to be committed.
func (a *Autopilot) closeOnly(ctx context.Context, task, reason string) (closed, now bool, err error) {
	// A task this process merged was not closed by it yet: only a merge
	// an earlier run made may have been. Asking costs a command source
	// without show: a list.
	here := a.mergedHere[task]
	delete(a.mergedHere, task)
	if !here {
		if t, err := a.opts.Source.Show(ctx, task); err == nil && t.Closed {
			return true, false, nil
		}
	}
	if err := a.opts.Source.Close(ctx, task, reason); err != nil {
		return false, false, a.notice(fmt.Sprintf("%s is merged, but closing it in %s failed: %v; the next run closes it, without running it again",
			task, a.opts.Source.Name(), err))
	}
	return true, true, nil
}

// conflicted sends a task whose merge conflicted back to its loop, on its
// branch brought up to the new base, while retries remain.
func (a *Autopilot) conflicted(ctx context.Context, m runfiles.TaskMerge, res mergeResult) error {
	files := strings.Join(res.Conflicts, ", ")
	return a.sendBack(ctx, m, res.Base, res.Conflicts, "conflict in "+files,
		fmt.Sprintf("its merge into %s conflicts in %s", a.base, files),
		func() (string, error) { return a.bringUpToDate(ctx, m, res.Onto, res.Conflicts) })
}

// unresolved sends a task whose work still holds conflict markers back to
// its loop, to resolve them, while retries remain: markers never reach the
// base branch.
func (a *Autopilot) unresolved(ctx context.Context, m runfiles.TaskMerge, res mergeResult) error {
	where := strings.Join(res.Markers, ", ")
	note := fmt.Sprintf("This task's work was done, but what its branch has committed still holds conflict markers "+
		"(<<<<<<<, =======, >>>>>>>) at %s, which ralph never merges into %s. Resolve each one, keeping what both sides meant, "+
		"make sure the task is still done, and commit.", where, a.base)
	return a.sendBack(ctx, m, res.Base, res.Markers, "conflict markers left in "+where,
		fmt.Sprintf("its work still holds conflict markers at %s", where),
		func() (string, error) { return note, nil })
}

// sendBack records why m's merge failed and, while retries remain, sends
// the task back to its loop with what prepare tells it; otherwise the task
// fails with what went wrong.
func (a *Autopilot) sendBack(ctx context.Context, m runfiles.TaskMerge, base string, files []string, reason, failure string,
	prepare func() (string, error)) error {
	if err := a.journal.record(runfiles.TopicMergeFailed, runfiles.AutopilotPayload{Task: m.Task, Base: base, Files: files, Reason: reason}); err != nil {
		return err
	}
	if m.Attempt > a.opts.Settings.Retries {
		return a.failTask(ctx, m.Task, fmt.Sprintf("%s, and no retry is left (autopilot.retries: %d)", failure, a.opts.Settings.Retries))
	}
	note, err := prepare()
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
	return a.journal.record(runfiles.TopicTaskRetry, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Attempt: m.Attempt + 1, Files: files})
}

// bringUpToDate rebases the task's branch on onto, the base branch's
// commit its merge conflicted with. When the rebase conflicts, onto is
// merged into the task's branch instead, and the conflicts are left for
// the task's loop to resolve. It returns what the loop is told.
func (a *Autopilot) bringUpToDate(ctx context.Context, m runfiles.TaskMerge, onto string, conflicts []string) (string, error) {
	pin, err := a.repo.WorktreePin(ctx, a.worktree(m.Task))
	if err != nil {
		return "", err
	}
	wt := git.Repo{Dir: a.worktree(m.Task), Pin: pin}
	files := strings.Join(conflicts, ", ")
	// A merge its last attempt left unresolved and uncommitted, or a
	// rebase a killed autopilot left half-way, is made again below, on
	// the base branch as it is now.
	if err := errors.Join(wt.AbortRebase(ctx), wt.AbortMerge(ctx)); err != nil {
		return "", err
	}
	rebaseConflicts, err := wt.Rebase(ctx, onto)
	if err != nil {
		return "", err
	}
	if len(rebaseConflicts) == 0 {
		return fmt.Sprintf("This task's work was done, but merging it into %s conflicted with work merged since, in %s. "+
			"The branch has been rebased onto %s. Check that the task is still done on top of the new work, fix what the other changes broke, and commit.",
			a.base, files, a.base), nil
	}
	res, err := wt.MergeNoCommit(ctx, onto, false)
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
func (a *Autopilot) startRetry(ctx context.Context, r runfiles.TaskSlot, slot string) error {
	p := runfiles.AutopilotPayload{Task: r.Task, Title: r.Title, Slot: slot, Worktree: r.Worktree, RunsOn: a.runsOn(), Branch: r.Branch,
		Attempt: r.Attempt, Components: r.Components}
	if err := a.journal.record(runfiles.TopicTaskAssigned, p); err != nil {
		return err
	}
	return a.launch(ctx, slot, r.Task, r.Attempt, runfiles.StartFresh)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

package autopilot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
)

// How verified work leaves the machine (autopilot.deliver). With merge,
// the local base branch moves to each verified merge, and that is all.
// With push, each verified merge is made on the remote's base branch as
// it is (fetched before the merge), pushed there expecting it still where
// it was (--force-with-lease), and only then does the local base branch
// move to it: a push somebody made meanwhile refuses ralph's, and the
// merge is made again on top of theirs. With pr, the merge is made and
// verified on the remote's base branch too, but it goes to the task's own
// branch on the remote and a pull request, and the local base branch never
// moves (pr.go).

const (
	deliverMerge = "merge"
	deliverPush  = "push"
	deliverPR    = "pr"
)

// delivery is the settings of how verified work is delivered.
type delivery struct {
	mode   string // deliverMerge, deliverPush or deliverPR
	remote string // the git remote push and pr deliver to
}

func newDelivery(mode, remote string) delivery {
	if mode == "" {
		mode = deliverMerge
	}
	if remote == "" {
		remote = "origin"
	}
	return delivery{mode: mode, remote: remote}
}

// remotely reports whether merges are made on the remote's base branch.
func (d delivery) remotely() bool { return d.mode != deliverMerge }

// tracking is the ref the remote's branch is fetched into: its
// remote-tracking branch, as git fetch would name it.
func (d delivery) tracking(branch string) string { return "refs/remotes/" + d.remote + "/" + branch }

// DeliveryError is a verified merge, or one to make, that cannot be
// delivered for a reason of the remote's or of the repository's, not of
// the task: the remote cannot be reached or refuses the push, it has no
// base branch to open pull requests against, or its base branch and the
// local one have diverged with changes git cannot merge. The merge stays
// in the queue, the run ends (resumable), and the next one delivers it.
type DeliveryError struct {
	Task string
	// What failed, in words.
	Problem string
	Fix     string
	Err     error
}

func (e *DeliveryError) Error() string {
	if e.Err == nil {
		return e.Problem
	}
	return e.Problem + ": " + e.Err.Error()
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Hint says what to do before running the autopilot again.
func (e *DeliveryError) Hint() string {
	return e.Fix + "; then run ralph autopilot again: it delivers the merge of " + e.Task + " first and goes on"
}

// Kind: the remote is not as the delivery needs it.
func (e *DeliveryError) Kind() hint.Kind { return hint.Conflict }

// CheckDelivery checks what the delivery settings need of the repository
// at root before anything changes: deliver: push and pr send work to
// autopilot.remote, which must be one of its remotes.
func CheckDelivery(ctx context.Context, root, mode, remote string) error {
	d := newDelivery(mode, remote)
	if !d.remotely() {
		return nil
	}
	if url, err := (git.Repo{Dir: root}).RemoteURL(ctx, d.remote); err == nil && url != "" {
		return nil
	}
	return &PreconditionError{Problem: fmt.Sprintf("autopilot.deliver is %s, but %s is not a remote of this repository", d.mode, d.remote),
		Fix: fmt.Sprintf("add it (git remote add %s URL), or set autopilot.remote to one of `git remote`'s", d.remote)}
}

// fetchBase fetches the remote's base branch into its remote-tracking
// ref and returns its tip; "" when the remote has no such branch.
func (m *merger) fetchBase(ctx context.Context, task string) (string, error) {
	ref, tracking := "refs/heads/"+m.base, m.deliver.tracking(m.base)
	if err := m.repo.Fetch(ctx, m.deliver.remote, "+"+ref+":"+tracking); err != nil {
		if tip, lerr := m.repo.RemoteRef(ctx, m.deliver.remote, ref); lerr == nil && tip == "" {
			return "", nil
		}
		return "", &DeliveryError{Task: task, Problem: fmt.Sprintf("fetching %s from %s failed", m.base, m.deliver.remote), Err: err,
			Fix: fmt.Sprintf("check that %s can be reached (git fetch %s %s)", m.deliver.remote, m.deliver.remote, m.base)}
	}
	return m.repo.Resolve(ctx, tracking)
}

// place is where a task's merge is made.
type place struct {
	// onto is the commit the task's work is merged onto; "" when it is
	// still to be made: the local and the remote base branches diverged.
	onto string
	// base is what the merge lands from: the local base branch's tip,
	// which must still be there when it moves (merge, push); the
	// remote's, for pr.
	base string
	// remote is the remote's base branch's tip ("" when it has none;
	// merge does not look).
	remote string
	// lease is what the push of the merge expects on the remote: the
	// base branch's tip for push, the task's branch's for pr.
	lease string
}

// place finds where task's merge is made. For merge, that is the local
// base branch's tip. For push, the remote's base branch is fetched: the
// merge is made on whichever of the two has the other, or, when both have
// commits of their own (the tracker's on the local one, somebody's push on
// the remote), on a merge of the two. For pr, it is made on the remote's.
func (m *merger) place(ctx context.Context, task runfiles.TaskMerge) (place, error) {
	local, err := m.repo.Resolve(ctx, "refs/heads/"+m.base)
	if err != nil {
		return place{}, err
	}
	switch m.deliver.mode {
	case deliverPush:
		remote, err := m.fetchBase(ctx, task.Task)
		if err != nil {
			return place{}, err
		}
		p := place{onto: local, base: local, remote: remote, lease: remote}
		if remote == "" || remote == local {
			return p, nil
		}
		if ahead, err := m.repo.IsAncestor(ctx, remote, local); err != nil || ahead {
			return p, err
		}
		behind, err := m.repo.IsAncestor(ctx, local, remote)
		if err != nil {
			return p, err
		}
		p.onto = ""
		if behind {
			p.onto = remote
		}
		return p, nil
	case deliverPR:
		return m.prPlace(ctx, task)
	}
	return place{onto: local, base: local}, nil
}

// bringIn makes, in scratch detached at the remote's base branch, the
// merge of the local base branch's own commits (the tracker's since the
// last push, and any made there by hand) into it: what the task's merge
// is made on when both moved. The remote's line is its first parent, so
// the merges ralph pushed stay on the first-parent line where MergedTasks
// reads them. A conflict in the tracker's files is resolved the local
// way, which has ralph's last word on each task; any other conflict is
// the user's to resolve, and stops the delivery.
func (m *merger) bringIn(ctx context.Context, scratch git.Repo, task string, p place) (string, error) {
	res, err := scratch.MergeNoCommit(ctx, p.base, false)
	if err != nil {
		return "", err
	}
	if rest := m.withoutTracker(res.Conflicts); len(rest) > 0 {
		_ = scratch.AbortMerge(ctx)
		return "", &DeliveryError{Task: task,
			Problem: fmt.Sprintf("%s and %s/%s have both moved, and their changes conflict in %s", m.base, m.deliver.remote, m.base, strings.Join(rest, ", ")),
			Fix: fmt.Sprintf("bring them together by hand (git pull --no-rebase %s %s, resolve, commit), or reset %s to %s/%s if its own commits can go",
				m.deliver.remote, m.base, m.base, m.deliver.remote, m.base)}
	}
	for _, path := range res.Conflicts {
		if err := scratch.TakePaths(ctx, p.base, path); err != nil {
			return "", err
		}
	}
	msg := fmt.Sprintf("ralph: bring %s's own commits onto %s/%s", m.base, m.deliver.remote, m.base)
	if err := scratch.CommitAllowEmpty(ctx, msg); err != nil {
		return "", err
	}
	return scratch.Head(ctx)
}

// requeue sends m back to the merge queue, to be made again.
func (a *Autopilot) requeue(m runfiles.TaskMerge, reason string) error {
	return a.journal.record(runfiles.TopicMergeFailed, runfiles.AutopilotPayload{Task: m.Task, Base: m.Base, Requeued: true, Reason: reason})
}

// pushBase delivers m (deliver: push): the verified merge goes to the
// remote's base branch, expected where the merge was made, before the
// local base branch moves to it. A merge already there (a restart after
// the push) is not pushed again. It reports false when m went back to the
// queue: a base branch, the local one or the remote's, moved since the
// merge was made.
func (a *Autopilot) pushBase(ctx context.Context, m runfiles.TaskMerge) (bool, error) {
	if m.Step == runfiles.MergePushed {
		return true, nil
	}
	local, err := a.repo.Resolve(ctx, "refs/heads/"+a.base)
	if err != nil {
		return false, err
	}
	if local != m.Base {
		// The local branch moved (a restart committed the tracker's
		// changes): the merge no longer lands from it by a fast-forward.
		return false, a.requeue(m, a.base+" moved since the merge was made; merging again")
	}
	moved, err := a.pushLeased(ctx, m, a.base)
	if err != nil {
		return false, err
	}
	if moved {
		return false, a.requeue(m, fmt.Sprintf("%s/%s moved since the merge was made (somebody pushed); merging again on its new tip", m.Remote, a.base))
	}
	if err := a.journal.record(runfiles.TopicMergePushed, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Commit: m.Commit,
		Remote: m.Remote, Branch: a.base}); err != nil {
		return false, err
	}
	return true, nil
}

// pushLeased pushes m's merge to branch on m's remote, leased on what the
// remote had there when the merge was made, unless the remote has it
// already (a restart after the push). It reports moved when the branch
// holds something else: somebody pushed since, and nothing was pushed
// over their work. A push that fails is looked at again before it is an
// error, as the failure may be a lost answer to a push that landed.
func (a *Autopilot) pushLeased(ctx context.Context, m runfiles.TaskMerge, branch string) (moved bool, err error) {
	ref := "refs/heads/" + branch
	there, moved, err := a.onRemote(ctx, m, ref)
	if err != nil || there || moved {
		return moved, err
	}
	pushErr := a.repo.PushLease(ctx, m.Remote, m.Commit, ref, m.Lease)
	if pushErr == nil {
		a.fault(FaultPushed)
		return false, nil
	}
	if there, moved, err = a.onRemote(ctx, m, ref); err != nil || !there && !moved {
		return false, &DeliveryError{Task: m.Task, Problem: fmt.Sprintf("pushing %s to %s's %s failed", m.Task, m.Remote, branch),
			Err: errors.Join(pushErr, err), Fix: fmt.Sprintf("check that you can push to %s (git push %s %s)", m.Remote, m.Remote, branch)}
	}
	return moved, nil
}

// onRemote looks at ref on m's remote: there is set when it has m's
// commit (pushed before a restart, or pushed on since), moved when it
// holds something else than the merge's lease.
func (a *Autopilot) onRemote(ctx context.Context, m runfiles.TaskMerge, ref string) (there, moved bool, err error) {
	tip, err := a.repo.RemoteRef(ctx, m.Remote, ref)
	switch {
	case err != nil:
		return false, false, &DeliveryError{Task: m.Task, Problem: fmt.Sprintf("reading %s from %s failed", ref, m.Remote), Err: err,
			Fix: fmt.Sprintf("check that %s can be reached (git ls-remote %s)", m.Remote, m.Remote)}
	case tip == m.Commit:
		return true, false, nil
	case tip == m.Lease:
		return false, false, nil
	case tip == "":
		return false, true, nil
	}
	if !a.repo.HasCommit(ctx, tip) {
		if err := a.repo.Fetch(ctx, m.Remote, "+"+ref+":"+a.merger.deliver.tracking(strings.TrimPrefix(ref, "refs/heads/"))); err != nil {
			return false, true, nil //nolint:nilerr // it moved, to something it no longer has: made again, the merge fetches anew
		}
	}
	on, err := a.repo.IsAncestor(ctx, m.Commit, tip)
	return on && err == nil, !on || err != nil, nil
}

// pushRest pushes, once the run ends (deliver: push), what the base
// branch has that the remote's lacks: the tracker's commits since the
// last merge. Only a fast-forward is pushed: when the remote moved too,
// they go with the next run's first merge.
func (a *Autopilot) pushRest(ctx context.Context) {
	d := a.merger.deliver
	if d.mode != deliverPush {
		return
	}
	ctx, cancel := steady(ctx)
	defer cancel()
	local, err := a.repo.Resolve(ctx, "refs/heads/"+a.base)
	if err != nil {
		return
	}
	remote, err := a.merger.fetchBase(ctx, "")
	if err != nil {
		_ = a.notice(fmt.Sprintf("%s's last commits were not pushed to %s: %v; they go with the next merge", a.base, d.remote, err))
		return
	}
	if remote == local {
		return
	}
	if ahead, err := a.repo.IsAncestor(ctx, remote, local); remote != "" && (err != nil || !ahead) {
		_ = a.notice(fmt.Sprintf("%s has commits %s/%s lacks, and %s/%s moved too: they go with the next run's first merge "+
			"(or now: git pull --no-rebase %s %s && git push %s %s)", a.base, d.remote, a.base, d.remote, a.base, d.remote, a.base, d.remote, a.base))
		return
	}
	if err := a.repo.PushLease(ctx, d.remote, local, "refs/heads/"+a.base, remote); err != nil {
		_ = a.notice(fmt.Sprintf("pushing %s's last commits to %s failed: %v; they go with the next merge", a.base, d.remote, err))
		return
	}
	_ = a.notice(fmt.Sprintf("pushed %s to %s (%s): the tracker's commits since the last merge", a.base, d.remote, shortHash(local)))
}

package autopilot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/runfiles"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/git"
)

// merger makes and verifies the merge of one finished task at a time. The
// merge is made in a scratch worktree detached at the base branch's tip,
// never in the user's checkout, or, when nothing is to run on it, of trees
// alone, with no checkout at all; the base branch moves only afterwards, by
// one fast-forward to the verified result, so undoing a merge is dropping
// the scratch worktree or the unreferenced commit.
type merger struct {
	repo      git.Repo // the user's checkout, on the base branch
	base      string   // the base branch
	worktrees string   // absolute worktrees_dir
	// tracker are the paths the task source keeps in the repository: a
	// task branch's changes to them are never merged.
	tracker []string
	mode    string // merge | rebase | squash
	verify  []criteria.Spec
	deliver delivery
	// sandbox confines verify's commands (Options.VerifySandbox).
	sandbox func(dir string, pin git.Pin) criteria.Sandbox
}

// mergeResult is what became of one merge attempt.
type mergeResult struct {
	// Base is the base branch's commit the merge lands from (see place).
	Base string
	// Onto is the commit the task's work was merged onto: Base, or with
	// deliver: push the remote's base branch, or a merge of the two.
	Onto string
	// Lease is what the delivery's push expects on the remote (see
	// place).
	Lease string
	// Verified names the verify checks the result passed.
	Verified []string
	// Commit is the verified result, when there were no conflicts and
	// verification passed.
	Commit string
	// Conflicts are the paths that did not merge.
	Conflicts []string
	// Markers are the conflict markers ("path:line") the task's work
	// would bring onto the base branch: a conflict committed unresolved.
	Markers []string
	// Failed are the verify criteria that did not pass.
	Failed []criteria.Result
	// Already is the commit on the base branch that already names the task
	// in its Ralph-Task trailer; Commit is then Base, and nothing is merged.
	Already string
}

func (m *merger) scratchDir(task string) string {
	return filepath.Join(m.worktrees, ".merge-"+task)
}

// prepare merges task's branch onto the base branch's tip (where place
// says), or onto onto when it is set (a verified merge not landed yet),
// in a scratch worktree and verifies the result. The base branch does not
// move.
func (m *merger) prepare(ctx context.Context, task runfiles.TaskMerge, message, onto string) (mergeResult, error) {
	// Git's own steps are short and bounded; an interrupt cuts only the
	// verification short, so a merge verified before it is kept.
	gitCtx, cancel := steady(ctx)
	defer cancel()
	at, err := place{onto: onto, base: onto}, error(nil)
	if onto == "" {
		if at, err = m.place(gitCtx, task); err != nil {
			return mergeResult{}, err
		}
	}
	res := mergeResult{Base: at.base, Lease: at.lease}
	dir := m.scratchDir(task.Task)
	made := at.onto == ""
	// A scratch worktree a killed run left, or its registration, goes
	// before one is made here.
	cleared := made || m.leftScratch(dir)
	if cleared {
		if err := m.repo.RemoveWorktree(gitCtx, dir); err != nil {
			return res, err
		}
	}
	defer func() {
		if m.leftScratch(dir) {
			_ = m.repo.RemoveWorktree(gitCtx, dir)
		}
	}()
	scratch := git.Repo{Dir: dir}
	if made {
		if err := m.repo.AddDetachedWorktree(gitCtx, dir, at.remote); err != nil {
			return res, err
		}
		if at.onto, err = m.bringIn(gitCtx, scratch, task.Task, at); err != nil {
			return res, err
		}
	}
	baseTip := at.onto
	res.Onto = baseTip
	// A merge of this task can only be among the base branch's commits
	// that its branch does not have.
	named, err := m.repo.MergedTasks(gitCtx, task.Branch, baseTip)
	if err != nil {
		return res, err
	}
	if c := named[task.Task]; c != "" {
		res.Commit, res.Already = baseTip, c
		return res, nil
	}
	if !made {
		if done, err := m.mergeTrees(gitCtx, task, baseTip, message, &res); err != nil || done {
			return res, err
		}
	}
	start := baseTip
	if m.mode == "rebase" {
		start = task.Branch
	}
	if !cleared {
		if err := m.repo.RemoveWorktree(gitCtx, dir); err != nil {
			return res, err
		}
	}
	switch {
	case !made:
		err = m.repo.AddDetachedWorktree(gitCtx, dir, start)
	case start != baseTip:
		err = scratch.ResetHard(gitCtx, start)
	}
	if err != nil {
		return res, err
	}
	conflicts, err := m.combine(gitCtx, scratch, task, baseTip, message)
	if err != nil || len(conflicts) > 0 {
		res.Conflicts = conflicts
		return res, err
	}
	head, err := scratch.Head(gitCtx)
	if err != nil {
		return res, err
	}
	if res.Markers, err = scratch.ConflictMarkers(gitCtx, baseTip, head); err != nil || len(res.Markers) > 0 {
		return res, err
	}
	env, err := m.verifyEnv(gitCtx, dir, baseTip)
	if err != nil {
		return res, err
	}
	for _, r := range criteria.CheckAll(ctx, dir, m.verify, env) {
		if !r.Passed {
			res.Failed = append(res.Failed, r)
		} else {
			res.Verified = append(res.Verified, r.Name)
		}
	}
	if len(res.Failed) > 0 && ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	if len(res.Failed) == 0 {
		res.Commit = head
	}
	return res, nil
}

// leftScratch reports whether dir, a merge's scratch worktree, is there:
// this merge's, or one a killed run left.
func (m *merger) leftScratch(dir string) bool {
	_, err := os.Lstat(dir)
	return err == nil
}

// mergeTrees makes the merge without a checkout when nothing is to run on
// the result (no verify) and the mode keeps the branch's commits as they
// are (merge, squash): git merges the trees, and ralph's commit is made
// on them. done is false when the checkout must make it instead: a
// conflict, whose paths and retry the checkout's merge works out, a
// branch that changed the tracker's files, which the checkout puts back
// as the base branch has them, or a git too old to merge trees.
func (m *merger) mergeTrees(ctx context.Context, task runfiles.TaskMerge, baseTip, message string, res *mergeResult) (done bool, err error) {
	if len(m.verify) > 0 || m.mode == "rebase" {
		return false, nil
	}
	tree, ok, err := m.repo.MergeTrees(ctx, baseTip, task.Branch)
	if err != nil || !ok {
		return false, err
	}
	if same, err := m.repo.SameAt(ctx, baseTip, tree, m.tracker...); err != nil || !same {
		return false, err
	}
	parents := []string{baseTip, task.Branch}
	if m.mode == "squash" {
		parents = parents[:1]
	}
	commit, err := m.repo.CommitTree(ctx, tree, message, parents...)
	if err != nil {
		return false, err
	}
	if res.Markers, err = m.repo.ConflictMarkers(ctx, baseTip, commit); err != nil || len(res.Markers) > 0 {
		return true, err
	}
	res.Commit = commit
	return true, nil
}

// verifyEnv is how verify's criteria run in the scratch worktree dir: its
// repository pinned, since a confined command may rewrite the worktree's
// .git file, and confined as the slots are, since they run the tasks' code.
func (m *merger) verifyEnv(ctx context.Context, dir, baseTip string) (criteria.Env, error) {
	env := criteria.Env{RunStartCommit: baseTip}
	if len(m.verify) == 0 {
		return env, nil
	}
	pin, err := m.repo.WorktreePin(ctx, dir)
	if err != nil {
		return env, err
	}
	env.Git = pin
	if m.sandbox != nil {
		env.Sandbox = m.sandbox(dir, pin)
	}
	return env, nil
}

// combine brings the task's work onto baseTip in scratch, as the merge
// mode says, with the tracker's files as they are on the base branch, and
// ends with ralph's own commit naming the task (message): the merge
// commit, the squashed commit, or after replayed commits a commit of its
// own, so that only ralph's commits name a task as merged.
func (m *merger) combine(ctx context.Context, scratch git.Repo, task runfiles.TaskMerge, baseTip, message string) ([]string, error) {
	if m.mode == "rebase" {
		replayed, conflicts, err := m.replay(ctx, scratch, task, baseTip)
		if err != nil || len(conflicts) > 0 {
			return conflicts, err
		}
		if replayed {
			return nil, m.commitOwn(ctx, scratch, baseTip, message)
		}
		// A branch that merged the base branch into itself (its retry
		// after a conflict) cannot be replayed: the replay drops the merge
		// and meets the conflict again. Its work lands as one commit, so
		// the history stays linear.
	}
	res, err := scratch.MergeNoCommit(ctx, task.Branch, m.mode != "merge")
	if err != nil {
		return nil, err
	}
	if rest := m.withoutTracker(res.Conflicts); len(rest) > 0 {
		_ = scratch.AbortMerge(ctx)
		return rest, nil
	}
	return nil, m.commitOwn(ctx, scratch, baseTip, message)
}

// replay rebases the task's branch, checked out detached in scratch, onto
// baseTip. It reports false, with scratch moved to baseTip, when the
// branch must be squashed instead: it holds merge commits of its own; one
// of its commits carries ralph's task trailer, which on the base branch
// would say a task is merged that is not; or its commits conflict only in
// the tracker's files, which the squash takes from the base branch.
func (m *merger) replay(ctx context.Context, scratch git.Repo, task runfiles.TaskMerge, baseTip string) (bool, []string, error) {
	merges, err := scratch.HasMerges(ctx, baseTip, task.Branch)
	if err == nil && !merges {
		merges, err = scratch.NamesTasks(ctx, baseTip, task.Branch)
	}
	if err != nil || merges {
		return false, nil, errors.Join(err, scratch.ResetHard(ctx, baseTip))
	}
	conflicts, err := scratch.Rebase(ctx, baseTip)
	switch {
	case err != nil:
		return false, nil, err
	case len(conflicts) == 0:
		return true, nil, nil
	case len(m.withoutTracker(conflicts)) == 0:
		return false, nil, scratch.ResetHard(ctx, baseTip)
	}
	return false, m.withoutTracker(conflicts), nil
}

// commitOwn puts the tracker's files back as baseTip has them and commits
// whatever is staged, even nothing, as ralph's commit naming the task.
func (m *merger) commitOwn(ctx context.Context, scratch git.Repo, baseTip, message string) error {
	if err := scratch.TakePaths(ctx, baseTip, m.tracker...); err != nil {
		return err
	}
	return scratch.CommitAllowEmpty(ctx, message)
}

// withoutTracker drops the tracker's paths from conflicts: those are
// resolved in the base branch's favour.
func (m *merger) withoutTracker(conflicts []string) []string {
	return slices.DeleteFunc(conflicts, func(p string) bool { return underAny(p, m.tracker) })
}

// advance moves the base branch from base to commit, with the user's
// checkout, which has the base branch checked out. It reports false when
// the base branch is no longer at base: the merge must be made again.
func (m *merger) advance(ctx context.Context, base, commit string) (bool, error) {
	tip, err := m.repo.Resolve(ctx, "refs/heads/"+m.base)
	if err != nil {
		return false, err
	}
	switch {
	case tip == commit:
		return true, nil
	case tip != base:
		if done, err := m.repo.IsAncestor(ctx, commit, tip); err == nil && done {
			return true, nil
		}
		return false, nil
	}
	if err := m.repo.FastForward(ctx, commit); err != nil {
		// A fast-forward an earlier run was cut off in the middle of (a
		// machine that went down) is finished; anything else in the way
		// is the user's, and stays.
		if half, herr := m.repo.HalfForwarded(ctx, base, commit); herr != nil || !half {
			return false, fmt.Errorf("move %s to the merged result: %w", m.base, err)
		}
		if err := m.repo.ResetHard(ctx, commit); err != nil {
			return false, fmt.Errorf("finish moving %s to the merged result: %w", m.base, err)
		}
	}
	return true, nil
}

// evidence renders failed verify criteria for a failure reason.
func evidence(failed []criteria.Result) string {
	var b strings.Builder
	for i, r := range failed {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Name)
		if e := strings.TrimSpace(r.Evidence); e != "" {
			b.WriteString(": ")
			b.WriteString(lastLines(e, 5))
		}
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

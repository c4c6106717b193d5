package autopilot

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/internal/git"
)

// merger makes and verifies the merge of one finished task at a time. The
// merge is made in a scratch worktree detached at the base branch's tip,
// never in the user's checkout; the base branch moves only afterwards, by
// one fast-forward to the verified result, so undoing a merge is dropping
// the scratch worktree.
type merger struct {
	repo      git.Repo // the user's checkout, on the base branch
	base      string   // the base branch
	worktrees string   // absolute worktrees_dir
	// tracker are the paths the task source keeps in the repository: a
	// task branch's changes to them are never merged.
	tracker []string
	mode    string // merge | rebase | squash
	verify  []criteria.Spec
}

// mergeResult is what became of one merge attempt.
type mergeResult struct {
	// Base is the base branch's commit the merge was made on.
	Base string
	// Commit is the verified result, when there were no conflicts and
	// verification passed.
	Commit string
	// Conflicts are the paths that did not merge.
	Conflicts []string
	// Failed are the verify criteria that did not pass.
	Failed []criteria.Result
	// Already is the commit on the base branch that already names the task
	// in its Ralph-Task trailer; Commit is then Base, and nothing is merged.
	Already string
}

func (m *merger) scratchDir(task string) string {
	return filepath.Join(m.worktrees, ".merge-"+task)
}

// prepare merges task's branch onto the base branch's tip in a scratch
// worktree and verifies the result. The base branch does not move.
func (m *merger) prepare(ctx context.Context, task Merge, message string) (mergeResult, error) {
	baseTip, err := m.repo.Resolve(ctx, "refs/heads/"+m.base)
	if err != nil {
		return mergeResult{}, err
	}
	res := mergeResult{Base: baseTip}
	// A merge of this task can only be among the base branch's commits
	// that its branch does not have.
	named, err := m.repo.MergedTasks(ctx, task.Branch, baseTip)
	if err != nil {
		return res, err
	}
	if c := named[task.Task]; c != "" {
		res.Commit, res.Already = baseTip, c
		return res, nil
	}
	dir := m.scratchDir(task.Task)
	if err := m.repo.RemoveWorktree(ctx, dir); err != nil {
		return res, err
	}
	defer func() { _ = m.repo.RemoveWorktree(context.WithoutCancel(ctx), dir) }()
	start := baseTip
	if m.mode == "rebase" {
		start = task.Branch
	}
	if err := m.repo.AddDetachedWorktree(ctx, dir, start); err != nil {
		return res, err
	}
	scratch := git.Repo{Dir: dir}
	conflicts, err := m.combine(ctx, scratch, task, baseTip, message)
	if err != nil || len(conflicts) > 0 {
		res.Conflicts = conflicts
		return res, err
	}
	head, err := scratch.Head(ctx)
	if err != nil {
		return res, err
	}
	for _, r := range criteria.CheckAll(ctx, dir, m.verify, criteria.Env{RunStartCommit: baseTip}) {
		if !r.Passed {
			res.Failed = append(res.Failed, r)
		}
	}
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	if len(res.Failed) == 0 {
		res.Commit = head
	}
	return res, nil
}

// combine brings the task's work onto baseTip in scratch, as the merge
// mode says, with the tracker's files as they are on the base branch.
func (m *merger) combine(ctx context.Context, scratch git.Repo, task Merge, baseTip, message string) ([]string, error) {
	if m.mode == "rebase" {
		conflicts, err := scratch.Rebase(ctx, baseTip)
		if err != nil || len(conflicts) > 0 {
			return m.withoutTracker(conflicts), err
		}
		if err := scratch.TakePaths(ctx, baseTip, m.tracker...); err != nil {
			return nil, err
		}
		if _, err := scratch.CommitAll(ctx, "ralph: keep the tracker's files of "+m.base); err != nil {
			return nil, err
		}
		return nil, m.nameTask(ctx, scratch, task, baseTip)
	}
	res, err := scratch.MergeNoCommit(ctx, task.Branch, m.mode == "squash")
	if err != nil {
		return nil, err
	}
	if rest := m.withoutTracker(res.Conflicts); len(rest) > 0 {
		_ = scratch.AbortMerge(ctx)
		return rest, nil
	}
	if err := scratch.TakePaths(ctx, baseTip, m.tracker...); err != nil {
		return nil, err
	}
	_, err = scratch.CommitAll(ctx, message)
	return nil, err
}

// nameTask adds the Ralph-Task trailer to the last replayed commit, so
// that the base branch says the task is merged as a merge commit would;
// a task that brought no commit has nothing to name it on.
func (m *merger) nameTask(ctx context.Context, scratch git.Repo, task Merge, baseTip string) error {
	head, err := scratch.Resolve(ctx, "HEAD")
	if err != nil || head == baseTip {
		return err
	}
	return scratch.AddTaskTrailer(ctx, task.Task)
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
		return false, fmt.Errorf("move %s to the merged result: %w", m.base, err)
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

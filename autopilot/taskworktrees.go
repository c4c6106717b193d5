package autopilot

import (
	"context"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// TaskBranchPrefix begins the branch of a task's worktree (ralph/<id>).
const TaskBranchPrefix = "ralph/"

// TaskWorktreeStatus is a task's worktree, or its branch without one, as
// `ralph doctor` judges it against what the autopilot's files say.
type TaskWorktreeStatus struct {
	Task   string `json:"task"`
	Branch string `json:"branch"`
	// Dir is the worktree; "" for a branch without one.
	Dir string `json:"dir,omitempty"`
	// Prunable is why git would prune the worktree (its directory is
	// gone); "" when it would not.
	Prunable string `json:"prunable,omitempty"`
	// InProgress: the autopilot's state has the task running, or waiting
	// for its merge, a retry or a person's review.
	InProgress bool `json:"in_progress"`
	// Failed: the task failed, and the autopilot goes on from its
	// worktree when it takes the task again.
	Failed bool `json:"failed,omitempty"`
	// Base is the checkout's branch, which the autopilot merges into.
	Base string `json:"base,omitempty"`
	// Ahead counts the branch's commits that Base does not have; nil when
	// that cannot be told.
	Ahead *int `json:"ahead,omitempty"`
	// Uncommitted counts the worktree's uncommitted changes.
	Uncommitted int `json:"uncommitted"`
}

// Unmerged reports whether the worktree or its branch holds work its base
// does not have (or that cannot be told).
func (st TaskWorktreeStatus) Unmerged() bool {
	return st.Ahead == nil || *st.Ahead > 0 || st.Uncommitted > 0
}

// TaskWorktrees lists the worktrees on a ralph/ branch of the repository
// whose checkout's root is root, and the ralph/ branches without one, with
// whether the autopilot has their task in progress and what they hold
// that the checkout's branch does not. It changes nothing.
func TaskWorktrees(ctx context.Context, root string) ([]TaskWorktreeStatus, error) {
	repo := git.Repo{Dir: root}
	trees, err := repo.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	branches, err := repo.Branches(ctx, TaskBranchPrefix)
	if err != nil {
		return nil, err
	}
	state, err := runfiles.PeekAutopilotState(runfiles.In(root).Path())
	if err != nil {
		return nil, err
	}
	base, _ := repo.CurrentBranch(ctx)
	var out []TaskWorktreeStatus
	for _, t := range trees {
		if task, ok := strings.CutPrefix(t.Branch, TaskBranchPrefix); ok {
			out = append(out, TaskWorktreeStatus{Task: task, Branch: t.Branch, Dir: t.Path, Prunable: t.Prunable})
		}
	}
	for _, b := range branches {
		if !slices.ContainsFunc(out, func(st TaskWorktreeStatus) bool { return st.Branch == b }) {
			out = append(out, TaskWorktreeStatus{Task: strings.TrimPrefix(b, TaskBranchPrefix), Branch: b})
		}
	}
	for i := range out {
		st := &out[i]
		st.InProgress, st.Failed = taskInProgress(state, st.Task)
		st.Base = base
		if base != "" {
			if n, err := repo.CountCommits(ctx, "refs/heads/"+base, "refs/heads/"+st.Branch); err == nil {
				st.Ahead = &n
			}
		}
		if st.Dir != "" && st.Prunable == "" {
			// Pinned: the task's agent may have rewritten the worktree's .git.
			if pin, err := repo.WorktreePin(ctx, st.Dir); err == nil {
				if dirty, err := (git.Repo{Dir: st.Dir, Pin: pin}).Dirty(ctx); err == nil {
					st.Uncommitted = len(dirty)
				}
			}
		}
	}
	return out, nil
}

// taskInProgress reports whether the autopilot's state has task running
// or waiting (its merge, a retry, a review), or failed.
func taskInProgress(st *runfiles.AutopilotState, task string) (inProgress, failed bool) {
	is := func(o runfiles.TaskOutcome) bool { return o.Task == task }
	done := slices.ContainsFunc(st.Completed, is)
	failed = slices.ContainsFunc(st.Failed, is)
	return st.Started(task) && !done && !failed, failed
}

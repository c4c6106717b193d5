package autopilot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// The kinds of worktree ralph makes.
const (
	WorktreeLoop = "loop" // ralph loop --worktree's: <worktrees_dir>/.loops/NAME on ralph-loop/NAME
	WorktreeTask = "task" // an autopilot task's: <worktrees_dir>/<id> on ralph/<id>
)

// WorktreeStatus is one of the worktrees ralph made, or its branch without
// one, as `ralph worktree` shows it: a loop's or a task's, with how its
// loop is and what it holds that its base does not.
type WorktreeStatus struct {
	Kind string `json:"kind"`
	LoopWorktreeStatus
	// InProgress and Failed say, for a task's, what the autopilot's state
	// has of the task (TaskWorktreeStatus).
	InProgress bool `json:"in_progress,omitempty"`
	Failed     bool `json:"failed,omitempty"`
}

// Worktrees lists the worktrees ralph made in the repository whose
// checkout's root is root: the loops' (LoopWorktrees), then the tasks'
// (TaskWorktrees), then the spares a killed run left (SpareWorktrees).
// It changes nothing.
func Worktrees(ctx context.Context, root, worktrees string, now time.Time) ([]WorktreeStatus, error) {
	loops, err := LoopWorktrees(ctx, root, worktrees, now)
	if err != nil {
		return nil, err
	}
	out := make([]WorktreeStatus, 0, len(loops))
	for _, st := range loops {
		out = append(out, WorktreeStatus{Kind: WorktreeLoop, LoopWorktreeStatus: st})
	}
	tasks, err := taskWorktreeStatuses(ctx, root, now, false)
	if err != nil {
		return nil, err
	}
	return append(append(out, tasks...), SpareWorktrees(root, worktrees)...), nil
}

// taskWorktreeStatuses are the tasks' worktrees as WorktreeStatus; locked
// says this process holds the loop's lock of the one being removed.
func taskWorktreeStatuses(ctx context.Context, root string, now time.Time, locked bool) ([]WorktreeStatus, error) {
	list, err := TaskWorktrees(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]WorktreeStatus, 0, len(list))
	for _, t := range list {
		st := WorktreeStatus{Kind: WorktreeTask, InProgress: t.InProgress, Failed: t.Failed, LoopWorktreeStatus: LoopWorktreeStatus{
			LoopWorktree: LoopWorktree{Name: t.Task, Branch: t.Branch, Dir: t.Dir},
			Base:         t.Base, Ahead: t.Ahead, Uncommitted: t.Uncommitted, NoWorktree: t.Dir == "" || t.Prunable != ""}}
		if !st.NoWorktree {
			st.readLoop(now, locked)
		}
		out = append(out, st)
	}
	return out, nil
}

// FindWorktree is the worktree of ralph's called name: a loop's or a
// task's name, or its branch (ralph-loop/NAME, ralph/ID), which tells a
// loop from a task of the same name.
func FindWorktree(all []WorktreeStatus, name string) (WorktreeStatus, error) {
	var found []WorktreeStatus
	for _, st := range all {
		// A spare is named by no one: it is its run's, or clean's.
		if st.Kind == WorktreeSpare {
			continue
		}
		if st.Branch == name || st.Name == name {
			found = append(found, st)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return WorktreeStatus{}, &hint.Error{Err: fmt.Errorf("no worktree of ralph's is called %q (a loop's, a task's, or a branch %s… or %s…)", name, LoopBranchPrefix, TaskBranchPrefix),
			Fix: "ralph worktree list lists them"}
	}
	return WorktreeStatus{}, &hint.Error{Err: fmt.Errorf("%q names a loop's worktree and a task's", name),
		Fix: fmt.Sprintf("name it by its branch: %s%s or %s%s", LoopBranchPrefix, name, TaskBranchPrefix, name)}
}

// WorktreeDiff is what a worktree of ralph's holds that its base does not:
// its branch's commits and their patch, and its uncommitted changes.
type WorktreeDiff struct {
	Kind    string       `json:"kind"`
	Name    string       `json:"name"`
	Branch  string       `json:"branch"`
	Base    string       `json:"base,omitempty"`
	Commits []git.Commit `json:"commits"`
	// Patch is `git diff BASE...BRANCH`: what merging the branch brings.
	Patch string `json:"patch"`
	// Uncommitted is the patch of the worktree's uncommitted changes to
	// tracked files; Untracked its new files.
	Uncommitted string   `json:"uncommitted"`
	Untracked   []string `json:"untracked"`
}

// DiffWorktree reads what st holds that its base does not. A branch whose
// base is unknown or gone has no commits or patch to show; what is
// uncommitted is read through the repository ralph pinned for the
// worktree, never its .git file, which its agent may have rewritten.
func DiffWorktree(ctx context.Context, root string, st WorktreeStatus) (WorktreeDiff, error) {
	repo := git.Repo{Dir: root}
	d := WorktreeDiff{Kind: st.Kind, Name: st.Name, Branch: st.Branch, Base: st.Base, Commits: []git.Commit{}, Untracked: []string{}}
	if st.Ahead != nil && !st.NoBranch {
		commits, err := repo.CommitsBetween(ctx, st.Base, "refs/heads/"+st.Branch)
		if err != nil {
			return d, err
		}
		d.Commits = append(d.Commits, commits...)
		if d.Patch, err = repo.Diff(ctx, st.Base, "refs/heads/"+st.Branch); err != nil {
			return d, err
		}
	}
	if st.NoWorktree {
		return d, nil
	}
	pin, err := repo.WorktreePin(ctx, st.Dir)
	if err != nil {
		return d, err
	}
	wt := git.Repo{Dir: st.Dir, Pin: pin}
	if d.Uncommitted, err = wt.DiffUncommitted(ctx); err != nil {
		return d, err
	}
	dirty, err := wt.Dirty(ctx)
	if err != nil {
		return d, err
	}
	for _, line := range dirty {
		if path, ok := strings.CutPrefix(line, "?? "); ok {
			d.Untracked = append(d.Untracked, path)
		}
	}
	return d, nil
}

// CheckWorktreeName checks a name `ralph worktree` is given: a loop's
// name, a task's id, or either's branch; the loop name's rules say what is
// wrong with one that is none of them.
func CheckWorktreeName(name string) error {
	if task, ok := strings.CutPrefix(name, TaskBranchPrefix); ok {
		return tasks.ValidID(task)
	}
	if loop, ok := strings.CutPrefix(name, LoopBranchPrefix); ok {
		return CheckLoopName(loop)
	}
	err := CheckLoopName(name)
	if err != nil && tasks.ValidID(name) == nil {
		return nil
	}
	return err
}

// KeptWorktree is a worktree `ralph worktree clean` kept, and why.
type KeptWorktree struct {
	WorktreeStatus
	Why string `json:"why"`
}

// CleanWorktrees removes the worktrees of ralph's that names names (all
// when none) that are done with, and their branches: a loop's as
// CleanLoopWorktrees does; a task's whose task the autopilot has not in
// progress, whose loop is not running, with nothing uncommitted and its
// branch merged into its base. force removes those with work not merged
// too, and a failed task's; never one whose loop is running or whose task
// the autopilot has in progress, nor a task's while an autopilot runs in
// the repository (it may take the task again at any moment). With no
// names it removes the spares a killed run left too (CleanSpares).
func CleanWorktrees(ctx context.Context, root, worktrees string, names []string, force bool, now time.Time) (removed []WorktreeStatus, kept []KeptWorktree, err error) {
	all, err := Worktrees(ctx, root, worktrees, now)
	if err != nil {
		return nil, nil, err
	}
	chosen := all
	if len(names) > 0 {
		chosen = nil
		for _, name := range names {
			st, err := FindWorktree(all, name)
			if err != nil {
				return nil, nil, err
			}
			chosen = append(chosen, st)
		}
	}
	var loops []string
	for _, st := range chosen {
		if st.Kind == WorktreeLoop {
			loops = append(loops, st.Name)
		}
	}
	if len(loops) > 0 {
		r, k, err := CleanLoopWorktrees(ctx, root, worktrees, loops, force, now)
		for _, st := range r {
			removed = append(removed, WorktreeStatus{Kind: WorktreeLoop, LoopWorktreeStatus: st})
		}
		for _, st := range k {
			kept = append(kept, KeptWorktree{WorktreeStatus: WorktreeStatus{Kind: WorktreeLoop, LoopWorktreeStatus: st.LoopWorktreeStatus}, Why: st.Why})
		}
		if err != nil {
			return removed, kept, err
		}
	}
	if len(names) == 0 {
		r, k, err := CleanSpares(ctx, root, worktrees, now)
		removed, kept = append(removed, r...), append(kept, k...)
		if err != nil {
			return removed, kept, err
		}
	}
	autopilotRuns, _ := runfiles.LockHeld(runfiles.In(root).AutopilotLock())
	for _, st := range chosen {
		if st.Kind != WorktreeTask {
			continue
		}
		why, err := cleanTaskWorktree(ctx, root, st, force, autopilotRuns, now)
		if err != nil {
			return removed, kept, fmt.Errorf("remove the task worktree %s: %w", st.Name, err)
		}
		if why != "" {
			kept = append(kept, KeptWorktree{WorktreeStatus: st, Why: why})
			continue
		}
		removed = append(removed, st)
	}
	return removed, kept, nil
}

// cleanTaskWorktree removes st's worktree and branch unless they are to be
// kept, and returns why they are; "" when removed. As for a loop's, what
// it decides on is read again once it holds the task loop's lock.
func cleanTaskWorktree(ctx context.Context, root string, st WorktreeStatus, force, autopilotRuns bool, now time.Time) (string, error) {
	if why := keepTaskWorktree(st, force, autopilotRuns); why != "" {
		return why, nil
	}
	var lock *runfiles.Lock
	if !st.NoWorktree {
		var err error
		lock, err = runfiles.AcquireLock(ctx, runfiles.In(st.Dir).Lock(),
			runfiles.LockInfo{PID: os.Getpid(), Host: hostname(), StartedAt: now.UTC()}, runfiles.LockOptions{})
		if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok {
			return fmt.Sprintf("its loop is running (pid %d)", held.Holder.PID), nil
		}
		if err != nil {
			return "", err
		}
		defer func() { _ = lock.Release() }()
		again, err := taskWorktreeStatuses(ctx, root, now, true)
		if err != nil {
			return "", err
		}
		i := slices.IndexFunc(again, func(o WorktreeStatus) bool { return o.Branch == st.Branch })
		if i < 0 {
			return "", nil // gone meanwhile
		}
		if why := keepTaskWorktree(again[i], force, autopilotRuns); why != "" {
			return why, nil
		}
		st = again[i]
	}
	return "", removeLoopWorktree(ctx, git.Repo{Dir: root}, st.LoopWorktreeStatus, lock)
}

// keepTaskWorktree says why a task's worktree is to be kept; "" when it may
// go.
func keepTaskWorktree(st WorktreeStatus, force, autopilotRuns bool) string {
	switch {
	case st.Running:
		return fmt.Sprintf("its loop is running (pid %d)", st.PID)
	case st.InProgress:
		return fmt.Sprintf("the autopilot has task %s in progress, and removes its worktree once it is merged", st.Name)
	case autopilotRuns:
		return "an autopilot runs in this repository, and may take the task again: clean it once the autopilot has stopped"
	case force:
		return ""
	case st.Failed:
		return fmt.Sprintf("task %s failed, and the autopilot goes on from this worktree when it takes the task again: remove it with --force", st.Name)
	case st.Unfinished:
		return "its loop's run is unfinished, and the autopilot goes on with it when it takes the task again: remove it with --force"
	}
	return keepLoopWorktree(st.LoopWorktreeStatus, false)
}

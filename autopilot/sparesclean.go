package autopilot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// WorktreeSpare is the kind of a spare a run left: a merged task's
// worktree, reset and kept in <worktrees_dir>/.spare/N for the run's next
// tasks. A run removes its spares as it ends, and the next run takes over
// those of one that was killed; until then `ralph worktree clean` removes
// them.
const WorktreeSpare = "spare"

// SparesDir is where the runs keep their spares.
const SparesDir = ".spare"

// SpareWorktrees lists the spares in the worktrees directory of the
// repository whose checkout's root is root. The directory is the agents'
// to write into: a link, there or for .spare itself, is no spare and is
// never followed.
func SpareWorktrees(root, worktrees string) []WorktreeStatus {
	dir := filepath.Join(worktreesDir(root, worktrees), SparesDir)
	var out []WorktreeStatus
	for _, path := range spareDirs(dir) {
		out = append(out, WorktreeStatus{Kind: WorktreeSpare, LoopWorktreeStatus: LoopWorktreeStatus{
			LoopWorktree: LoopWorktree{Name: filepath.Base(path), Dir: path}}})
	}
	return out
}

// spareDirs are the directories in dir named as a run names its spares
// (N), none when dir is not a directory of its own.
func spareDirs(dir string) []string {
	if !realDir(dir) {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// realDir says whether path is a directory, not a link to one.
func realDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// CleanSpares removes the spares (SpareWorktrees), each with its
// registration, unless an autopilot runs in the repository, which takes
// them for its next tasks: they are then kept, and why. It holds the
// autopilot's lock while it removes them, so that no run starts and
// takes one from under it.
func CleanSpares(ctx context.Context, root, worktrees string, now time.Time) (removed []WorktreeStatus, kept []KeptWorktree, err error) {
	spares := SpareWorktrees(root, worktrees)
	if len(spares) == 0 {
		return nil, nil, nil
	}
	lock, err := runfiles.AcquireLock(ctx, runfiles.In(root).AutopilotLock(),
		runfiles.LockInfo{PID: os.Getpid(), Host: hostname(), StartedAt: now.UTC()}, runfiles.LockOptions{})
	if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok {
		why := fmt.Sprintf("an autopilot runs in this repository (pid %d), and takes its spares for its next tasks: it removes them as it ends", held.Holder.PID)
		for _, st := range spares {
			kept = append(kept, KeptWorktree{WorktreeStatus: st, Why: why})
		}
		return nil, kept, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = lock.Release() }()
	repo := git.Repo{Dir: root}
	for _, st := range spares {
		// Read again under the lock: a link put there meanwhile is not
		// removed through.
		if !realDir(st.Dir) {
			continue
		}
		if err := repo.RemoveWorktree(ctx, st.Dir); err != nil {
			return removed, kept, fmt.Errorf("remove the spare worktree %s: %w", st.Dir, err)
		}
		removed = append(removed, st)
	}
	// Left when not empty: what else is there is no spare of a run's.
	_ = os.Remove(filepath.Join(worktreesDir(root, worktrees), SparesDir))
	return removed, kept, nil
}

package autopilot

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// spares are the worktrees of merged tasks, reset and kept for the next
// tasks of the run (<worktrees_dir>/.spare/N, detached): a task's
// worktree is still <worktrees_dir>/<id> on ralph/<id>, but made by
// moving a spare there and checking out its branch, which costs a task
// less than `git worktree add` and its removal. A spare is clean once it
// is in .spare/ (spareTask moves it there last), so one a killed run
// left is taken by the next; the run removes them as it ends.
type spares struct {
	dir string
	mu  sync.Mutex
	// free are the spares' paths; next numbers the next one.
	free []string
	next int
}

// newSpares finds the spares a run that was killed left in worktrees.
func newSpares(worktrees string) *spares {
	s := &spares{dir: filepath.Join(worktrees, SparesDir)}
	// Only directories named N: a link put there is neither followed nor
	// removed through.
	for _, path := range spareDirs(s.dir) {
		s.free = append(s.free, path)
		n, _ := strconv.Atoi(filepath.Base(path))
		s.next = max(s.next, n+1)
	}
	// Numbered past whatever else is there, which a move must not land on.
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			s.next = max(s.next, n+1)
		}
	}
	return s
}

// take is a spare to use, "" when there is none.
func (s *spares) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) == 0 {
		return ""
	}
	path := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	return path
}

// place is where the next spare goes.
func (s *spares) place() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return filepath.Join(s.dir, strconv.Itoa(s.next-1))
}

func (s *spares) put(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, path)
}

// reuses says whether this run keeps worktrees for its next tasks: only
// where its loops run here (a cluster's worktrees only prepare branches).
func (a *Autopilot) reuses() bool { return a.runsOn() == "" }

// spareTask resets the worktree of task, merged, and keeps it as a spare;
// false when it cannot be (it is then removed as before). It is detached
// where the task's branch was, whose merge the base branch has, so the
// next task's checkout changes only what was merged since; the base
// branch is where git checks it out should its HEAD not be read.
func (a *Autopilot) spareTask(ctx context.Context, task string) bool {
	if !a.reuses() {
		return false
	}
	dir := a.worktree(task)
	pin, err := a.pinIn(dir)
	if err != nil {
		return false
	}
	if err := a.repo.ResetWorktree(ctx, pin, dir, "refs/heads/"+a.base); err != nil {
		return false
	}
	if err := os.MkdirAll(a.spares.dir, 0o755); err != nil {
		return false
	}
	place := a.spares.place()
	if err := a.repo.MoveWorktree(pin, dir, place); err != nil {
		return false
	}
	a.spares.put(place)
	return true
}

// useSpare makes task's worktree from a spare, on its branch (from start
// when the branch is new); false when there is no spare or it could not
// be used (it is then removed).
func (a *Autopilot) useSpare(ctx context.Context, task, start string) bool {
	if !a.reuses() {
		return false
	}
	for {
		spare := a.spares.take()
		if spare == "" {
			return false
		}
		dir := a.worktree(task)
		pin, err := a.pinIn(spare)
		if err == nil {
			if err = a.repo.MoveWorktree(pin, spare, dir); err == nil {
				if err = a.repo.CheckoutBranch(ctx, pin, dir, branchOf(task), start); err == nil {
					return true
				}
				spare = dir
			}
		}
		// Not what a spare should be: gone, with its registration.
		_ = a.repo.RemoveWorktree(ctx, spare)
		_ = a.repo.PruneWorktrees(ctx)
	}
}

// removeSpares removes the spares as the run ends.
func (a *Autopilot) removeSpares(ctx context.Context) {
	for spare := a.spares.take(); spare != ""; spare = a.spares.take() {
		_ = a.repo.RemoveWorktree(ctx, spare)
	}
	_ = os.Remove(a.spares.dir)
}

package autopilot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// The loops' worktrees: `ralph loop --worktree NAME` runs a loop of the
// user's in a worktree and on a branch of its own, so that it can run
// beside another loop or the autopilot in the same repository. They are
// made in the autopilot's worktrees directory, where they can never take
// a task's place:
//
//	<worktrees_dir>/.loops/NAME   on branch ralph-loop/NAME
//
// A task id never starts with '.', so no task's worktree is .loops, nor is
// the merge queue's .merge-<task>; and the autopilot looks at nothing in
// the directory but its tasks' own. The branch is not ralph/loop/NAME: git
// keeps a branch as a file under refs/heads/, so the branch of a task
// called "loop" (ralph/loop) and ralph/loop/NAME could not both exist.
// Each loop has its own .ralph/ in its worktree, so its lock is neither the
// autopilot's nor that of a loop in the checkout, and they exclude none of
// each other.
const (
	// LoopsDir is the directory of the loops' worktrees in the worktrees
	// directory.
	LoopsDir = ".loops"
	// LoopBranchPrefix begins the branch of a loop's worktree.
	LoopBranchPrefix = "ralph-loop/"
	// loopBaseKey is the branch's key in git's config
	// (branch.ralph-loop/NAME.ralphbase) that records what the branch was
	// made from: the branch checked out then, or its commit. git drops it
	// with the branch.
	loopBaseKey = "ralphbase"
)

// LoopWorktree is where the loop called Name runs.
type LoopWorktree struct {
	Name   string `json:"name"`
	Branch string `json:"branch"`
	// Dir is the worktree's absolute path.
	Dir string `json:"path"`
}

// LoopWorktreeIn is the worktree of the loop called name in the repository
// whose checkout's root is root; worktrees is autopilot.worktrees_dir,
// relative to root unless absolute.
func LoopWorktreeIn(root, worktrees, name string) LoopWorktree {
	return LoopWorktree{Name: name, Branch: LoopBranchPrefix + name, Dir: filepath.Join(loopsDir(root, worktrees), name)}
}

func loopsDir(root, worktrees string) string {
	return filepath.Join(worktreesDir(root, worktrees), LoopsDir)
}

func worktreesDir(root, worktrees string) string {
	if filepath.IsAbs(worktrees) {
		return worktrees
	}
	return filepath.Join(root, worktrees)
}

// CheckLoopName says what is wrong with name as a loop's worktree's name,
// which names a directory and a branch: the rules of a task id.
func CheckLoopName(name string) error { return tasks.ValidName("worktree name", name) }

// LoopRepo is the root of the checkout dir is in, where a loop's worktree
// is made from: a *PreconditionError when dir is in no git repository, or
// in one without a commit to branch from.
func LoopRepo(ctx context.Context, dir string) (string, error) {
	repo := git.Repo{Dir: dir}
	if ok, err := repo.IsRepo(ctx); err != nil || !ok {
		return "", &PreconditionError{Problem: dir + " is not in a git repository: a loop's worktree is one of its repository's",
			Fix: "run it in a repository (git init, and a first commit), or run the loop without --worktree"}
	}
	root, err := repo.Root(ctx)
	if err != nil {
		return "", err
	}
	if head, _ := (git.Repo{Dir: root}).Head(ctx); head == "" {
		return "", &PreconditionError{Problem: "the repository has no commit to make the loop's worktree from",
			Fix: "make a first commit (git commit --allow-empty -m 'start' is enough)"}
	}
	return root, nil
}

// MakeLoopWorktree makes lw's worktree unless it is there, and reports
// whether it made it and from what. It is made from the checkout root's
// HEAD on a new branch, which records what it was made from (the branch
// checked out, or HEAD's commit when detached); a branch that is there
// already is checked out as it is, so the loop's work goes on from it.
// The worktrees directory is made as the autopilot makes it, ignored by
// git.
func MakeLoopWorktree(ctx context.Context, root, worktrees string, lw LoopWorktree) (made bool, base string, err error) {
	repo := git.Repo{Dir: root}
	if repo.IsWorktreeRoot(ctx, lw.Dir) {
		return false, "", nil
	}
	if err := makeLoopDir(root, worktrees, lw); err != nil {
		return false, "", err
	}
	head, base, err := headAndBase(ctx, repo)
	if err != nil {
		return false, "", err
	}
	branchWasThere := repo.BranchExists(ctx, lw.Branch)
	if err := repo.AddWorktree(ctx, lw.Dir, lw.Branch, head); err != nil {
		return false, "", fmt.Errorf("make the worktree %s on %s: %w", lw.Dir, lw.Branch, err)
	}
	if branchWasThere {
		base, err = repo.BranchConfig(ctx, lw.Branch, loopBaseKey)
		return true, base, err
	}
	return true, base, repo.SetBranchConfig(ctx, lw.Branch, loopBaseKey, base)
}

// makeLoopDir makes the directories lw's worktree goes in, and refuses a
// directory in its place that holds anything: it is not ralph's to remove.
func makeLoopDir(root, worktrees string, lw LoopWorktree) error {
	if err := ensureIgnoredDir(root, worktreesDir(root, worktrees)); err != nil {
		return err
	}
	if err := makeDirIn(root, filepath.Dir(lw.Dir)); err != nil {
		return err
	}
	if entries, err := os.ReadDir(lw.Dir); err == nil && len(entries) > 0 {
		return &PreconditionError{Problem: lw.Dir + " is there and is not a worktree of this repository",
			Fix: "move it out of the way, or give the loop's worktree another name"}
	}
	return nil
}

// headAndBase are the commit the checkout is at and what a branch made
// from it is made from: the branch checked out, or that commit when HEAD
// is detached.
func headAndBase(ctx context.Context, repo git.Repo) (head, base string, err error) {
	if head, err = repo.Head(ctx); err != nil {
		return "", "", err
	}
	if base, err = repo.CurrentBranch(ctx); err != nil || base != "" {
		return head, base, err
	}
	return head, head, nil
}

// NewLoopName is a name for a new loop's worktree, made from the first
// words of its objective so that a list of them says which loop is which:
// at most four words and 24 characters, lower-case, without the little
// words ("add-json-flag-export" for "Add a --json flag to the export
// command"), and -2, -3, … when a worktree or branch has it already; "loop"
// when the objective has no words.
func NewLoopName(ctx context.Context, root, worktrees, objective string) string {
	base := nameOf(objective)
	repo := git.Repo{Dir: root}
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		lw := LoopWorktreeIn(root, worktrees, name)
		if _, err := os.Lstat(lw.Dir); errors.Is(err, fs.ErrNotExist) && !repo.BranchExists(ctx, lw.Branch) {
			return name
		}
	}
}

// littleWords are left out of a name: they make it longer, not clearer.
var littleWords = []string{"a", "an", "the", "to", "of", "and", "or", "in", "on", "for", "with", "by", "at", "as", "is", "be", "it", "please"}

func nameOf(objective string) string {
	const maxWords, maxLen = 4, 24
	var words []string
	n := 0
	for _, w := range strings.FieldsFunc(tasks.ASCIILetters(strings.ToLower(objective)), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if slices.Contains(littleWords, w) {
			continue
		}
		if len(words) == 0 && len(w) > maxLen {
			w = w[:maxLen] // a long first word is cut, not dropped
		}
		if len(words) == maxWords || n+len(w) > maxLen {
			break
		}
		words = append(words, w)
		n += len(w) + 1
	}
	if len(words) == 0 {
		return "loop"
	}
	return strings.Join(words, "-")
}

// LoopWorktreeStatus is a loop's worktree as `ralph worktrees` shows it.
type LoopWorktreeStatus struct {
	LoopWorktree
	// Base is what the branch was made from; "" when unknown.
	Base string `json:"base,omitempty"`
	// NoWorktree: the branch is there, its worktree is not.
	NoWorktree bool `json:"no_worktree,omitempty"`
	// NoBranch: the worktree is there, its branch is not.
	NoBranch bool `json:"no_branch,omitempty"`
	// The loop, as its .ralph/ says.
	Running    bool                  `json:"running"`
	PID        int                   `json:"pid,omitempty"`
	RunID      string                `json:"run_id,omitempty"`
	Ended      *runfiles.Termination `json:"ended,omitempty"`
	Unfinished bool                  `json:"unfinished,omitempty"`
	// Ahead counts the branch's commits that its base does not have (0:
	// it is merged); nil when that cannot be told (no base recorded, the
	// base or the branch gone).
	Ahead *int `json:"ahead,omitempty"`
	// Uncommitted counts the worktree's uncommitted changes, its .ralph/
	// aside.
	Uncommitted int `json:"uncommitted"`
}

// LoopWorktrees lists the loops' worktrees of the repository whose
// checkout's root is root, by name: each directory in the loops' directory
// and each branch ralph-loop/NAME, with how its loop is and how far its
// branch is ahead of its base. It changes nothing.
func LoopWorktrees(ctx context.Context, root, worktrees string, now time.Time) ([]LoopWorktreeStatus, error) {
	names, err := loopNames(ctx, root, worktrees)
	if err != nil {
		return nil, err
	}
	out := make([]LoopWorktreeStatus, 0, len(names))
	for _, name := range names {
		st, err := loopWorktreeStatus(ctx, root, LoopWorktreeIn(root, worktrees, name), now, false)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// loopNames are the names of the directories in the loops' directory and
// of the loops' branches, sorted, each once; a name that could not be a
// loop's (a file put there by hand) is left out.
func loopNames(ctx context.Context, root, worktrees string) ([]string, error) {
	var names []string
	entries, err := os.ReadDir(loopsDir(root, worktrees))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && CheckLoopName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	branches, err := git.Repo{Dir: root}.Branches(ctx, LoopBranchPrefix)
	if err != nil {
		return nil, err
	}
	for _, b := range branches {
		if name := strings.TrimPrefix(b, LoopBranchPrefix); CheckLoopName(name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// loopWorktreeStatus reads how lw is; locked says this process holds its
// loop's lock, which is then no loop running.
func loopWorktreeStatus(ctx context.Context, root string, lw LoopWorktree, now time.Time, locked bool) (LoopWorktreeStatus, error) {
	repo := git.Repo{Dir: root}
	st := LoopWorktreeStatus{LoopWorktree: lw}
	st.NoBranch = !repo.BranchExists(ctx, lw.Branch)
	if _, err := os.Lstat(lw.Dir); errors.Is(err, fs.ErrNotExist) {
		st.NoWorktree = true
	} else {
		st.readLoop(now, locked)
		// Pinned: the loop's agent may have rewritten the worktree's .git.
		pin, err := repo.WorktreePin(ctx, lw.Dir)
		if err == nil {
			dirty, err := git.Repo{Dir: lw.Dir, Pin: pin}.Dirty(ctx)
			if err == nil {
				st.Uncommitted = len(dirty)
			}
		}
	}
	if st.NoBranch {
		return st, nil
	}
	base, err := repo.BranchConfig(ctx, lw.Branch, loopBaseKey)
	if err != nil {
		return st, err
	}
	st.Base = base
	if base != "" {
		if n, err := repo.CountCommits(ctx, base, "refs/heads/"+lw.Branch); err == nil {
			st.Ahead = &n
		}
	}
	return st, nil
}

// readLoop fills in how the worktree's loop is; locked says this process
// holds its lock. A run is unfinished when it has not ended for good
// (killed, interrupted, stopped), and so is one whose state cannot be
// read: what it holds is not known to be done with.
func (st *LoopWorktreeStatus) readLoop(now time.Time, locked bool) {
	s, err := runfiles.ReadStatus(st.Dir, 0, now)
	st.Running, st.PID, st.RunID = s.Running && !locked, s.PID, s.RunID
	if st.Running {
		return
	}
	if err != nil {
		st.Unfinished = true
		return
	}
	st.Ended = s.Ended
	st.Unfinished = s.RunID != "" && (s.Ended == nil || s.Ended.Reason.Unfinished())
}

// KeptLoopWorktree is a loop's worktree CleanLoopWorktrees left, and why.
type KeptLoopWorktree struct {
	LoopWorktreeStatus
	Why string `json:"why"`
}

// CleanLoopWorktrees removes the worktrees of the loops called names (all
// of them when names is empty), with their branches, that are done with:
// whose loop is not running, whose run is not unfinished (a resume would
// go on with it), with nothing uncommitted, and whose branch is merged
// into the base it was made from. With force it removes every one whose
// loop is not running. A loop that runs is never touched: the removal
// takes the loop's lock, so that none starts in a worktree as it goes.
// It returns what it removed and what it kept, saying why.
func CleanLoopWorktrees(ctx context.Context, root, worktrees string, names []string, force bool, now time.Time) (removed []LoopWorktreeStatus, kept []KeptLoopWorktree, err error) {
	all, err := LoopWorktrees(ctx, root, worktrees, now)
	if err != nil {
		return nil, nil, err
	}
	chosen, err := chooseLoopWorktrees(all, names, loopsDir(root, worktrees))
	if err != nil {
		return nil, nil, err
	}
	for _, st := range chosen {
		why, err := cleanLoopWorktree(ctx, root, worktrees, st, force, now)
		if err != nil {
			return removed, kept, fmt.Errorf("remove the loop worktree %s: %w", st.Name, err)
		}
		if why != "" {
			kept = append(kept, KeptLoopWorktree{LoopWorktreeStatus: st, Why: why})
			continue
		}
		removed = append(removed, st)
	}
	return removed, kept, nil
}

// chooseLoopWorktrees is those of all that names names, in the order
// given; all of them when names is empty. A name that is none of them is
// an error.
func chooseLoopWorktrees(all []LoopWorktreeStatus, names []string, in string) ([]LoopWorktreeStatus, error) {
	if len(names) == 0 {
		return all, nil
	}
	var chosen []LoopWorktreeStatus
	for _, name := range names {
		i := slices.IndexFunc(all, func(st LoopWorktreeStatus) bool { return st.Name == name })
		if i < 0 {
			return nil, &hint.Error{Err: fmt.Errorf("no loop worktree is called %q (in %s, or a branch %s%s)", name, in, LoopBranchPrefix, name),
				Fix: "ralph worktrees lists them"}
		}
		chosen = append(chosen, all[i])
	}
	return chosen, nil
}

// cleanLoopWorktree removes st's worktree and branch unless they are to be
// kept, and returns why they are; "" when removed. What it decides on is
// read again once it holds the loop's lock.
func cleanLoopWorktree(ctx context.Context, root, worktrees string, st LoopWorktreeStatus, force bool, now time.Time) (string, error) {
	if why := keepLoopWorktree(st, force); why != "" {
		return why, nil
	}
	var lock *runfiles.Lock
	if !st.NoWorktree {
		var err error
		lock, err = runfiles.AcquireLock(ctx, runfiles.In(st.Dir).Lock(),
			runfiles.LockInfo{PID: os.Getpid(), Host: hostname(), StartedAt: now.UTC()}, runfiles.LockOptions{})
		if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok {
			return fmt.Sprintf("its loop is running (pid %d): stop it first (ralph stop -C %s)", held.Holder.PID, st.Dir), nil
		}
		if err != nil {
			return "", err
		}
		defer func() { _ = lock.Release() }()
		if st, err = loopWorktreeStatus(ctx, root, st.LoopWorktree, now, true); err != nil {
			return "", err
		}
		if why := keepLoopWorktree(st, force); why != "" {
			return why, nil
		}
	}
	return "", removeLoopWorktree(ctx, git.Repo{Dir: root}, st, lock)
}

// removeLoopWorktree removes st's worktree and its branch. Windows cannot
// delete a file that is open, so the lock is let go of first there, which
// leaves an instant in which a loop could start in the worktree; elsewhere
// it is held throughout.
func removeLoopWorktree(ctx context.Context, repo git.Repo, st LoopWorktreeStatus, lock *runfiles.Lock) error {
	if !st.NoWorktree {
		if runtime.GOOS == "windows" {
			if err := lock.Release(); err != nil {
				return err
			}
		}
		if err := repo.RemoveWorktree(ctx, st.Dir); err != nil {
			return err
		}
	}
	return repo.DeleteBranch(ctx, st.Branch)
}

// keepLoopWorktree says why st is to be kept; "" when it may go.
func keepLoopWorktree(st LoopWorktreeStatus, force bool) string {
	merged := st.Base
	if merged == "" {
		merged = "its base"
	}
	switch {
	case st.Running:
		return fmt.Sprintf("its loop is running (pid %d): stop it first (ralph stop -C %s)", st.PID, st.Dir)
	case force:
		return ""
	case st.Unfinished:
		return fmt.Sprintf("its run is unfinished: go on with it (ralph loop --worktree %s --resume), or remove it with --force", st.Name)
	case st.Uncommitted > 0:
		return fmt.Sprintf("%d uncommitted %s in it: commit them, or remove it with --force", st.Uncommitted, plural(st.Uncommitted, "change", "changes"))
	case st.NoBranch:
		return ""
	case st.Ahead == nil:
		return fmt.Sprintf("whether %s is merged cannot be told (%s is not there): remove it with --force", st.Branch, merged)
	case *st.Ahead > 0:
		return fmt.Sprintf("%d %s not merged into %s: merge %s, or remove it with --force", *st.Ahead, plural(*st.Ahead, "commit", "commits"), merged, st.Branch)
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

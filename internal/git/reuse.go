package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A worktree that is done with can be reset and kept, to be moved where
// the next one is wanted: `git worktree add` writes a new git directory
// and every file, and its removal deletes them again, where a kept one
// only changes what differs between the two commits.

// ResetWorktree makes the linked worktree at path, whose git directory is
// pin's, ready to serve as a new one: detached where its branch is (or,
// where that cannot be read from its files, checked out detached at
// commit), no untracked or ignored file left (a loop's .ralph/, a build's
// output, a nested repository), and no state of its own in its git
// directory beyond its HEAD and index (a merge or rebase under way,
// per-worktree refs and config, its reflog). Its branch is left free to
// be deleted. Its tracked files are left as they are: CheckoutBranch
// makes them the next start's, as a checkout here would first have made
// them commit's, one git process a task fewer. A worktree with
// submodules is refused: their git directories live outside it, and a
// reset would not reach them.
func (g Repo) ResetWorktree(ctx context.Context, pin Pin, path, commit string) error {
	wt := Repo{Dir: path, Pin: pin}
	if !wt.detachInPlace() {
		if _, err := wt.run(ctx, "checkout", "--quiet", "--force", "--detach", commit); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(filepath.Join(path, ".gitmodules")); err == nil {
		return fmt.Errorf("the worktree %s has submodules", path)
	}
	if _, err := wt.run(ctx, "clean", "--quiet", "-ffdx"); err != nil {
		return err
	}
	return cutGitDir(pin)
}

// detachInPlace points a pinned worktree's HEAD at the commit its branch
// is at, as `git checkout --detach` would, by writing its HEAD file
// (atomically, as git does); false, with nothing changed, when HEAD is
// not a branch ralph reads from the repository's files.
func (g Repo) detachInPlace() bool {
	headPath := filepath.Join(g.Pin.GitDir, "HEAD")
	head, err := os.ReadFile(headPath)
	if err != nil || g.Pin.IsZero() {
		return false
	}
	ref, ok := strings.CutPrefix(strings.TrimSuffix(string(head), "\n"), "ref: ")
	if !ok {
		return false
	}
	hash, ok := g.readBranch(ref)
	if !ok {
		return false
	}
	// HEAD.lock is git's lock on HEAD: taken as git takes it, or left to
	// git when something holds it.
	tmp := headPath + ".lock"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false
	}
	_, err = f.WriteString(hash + "\n")
	if err = errors.Join(err, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return false
	}
	if err := os.Rename(tmp, headPath); err != nil {
		_ = os.Remove(tmp)
		return false
	}
	return true
}

// worktreeOwnFiles are what a linked worktree's git directory holds once
// `git worktree add` has made it, and its reflog gone.
var worktreeOwnFiles = []string{"HEAD", "index", "commondir", "gitdir"}

// MoveWorktree moves the linked worktree at from, whose git directory is
// pin's, to to, and tells git and the worktree where each other is, as
// `git worktree move` does without a process of its own. to's parent
// must exist. A move cut short leaves a worktree git prunes and the
// autopilot removes.
func (g Repo) MoveWorktree(pin Pin, from, to string) error {
	defer lockWorktrees(g.Dir)()
	abs, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	if err := os.Rename(from, abs); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(pin.GitDir, "gitdir"), []byte(filepath.Join(abs, ".git")+"\n"), 0o644); err != nil {
		return err
	}
	// Written anew: a task's agent may have rewritten it.
	return os.WriteFile(filepath.Join(abs, ".git"), []byte("gitdir: "+pin.GitDir+"\n"), 0o644)
}

// CheckoutBranch checks out branch in the clean worktree at path, whose
// git directory is pin's: a new branch is made at start, an existing one
// checked out as it is, as AddWorktree does.
func (g Repo) CheckoutBranch(ctx context.Context, pin Pin, path, branch, start string) error {
	wt := Repo{Dir: path, Pin: pin}
	// A commit, not a name: `git checkout -b` resolves its start point
	// once for the files and again for the branch, and a branch that moved
	// in between (the base branch, as a merge lands) would leave the new
	// branch at one commit and its index at another, whose next commit
	// reverts what came between.
	commit, err := wt.Resolve(ctx, start)
	if err != nil {
		return err
	}
	// --force: the index and files are commit's whatever the worktree's
	// HEAD was.
	if _, err := wt.run(ctx, "checkout", "--quiet", "--force", "-b", branch, commit); err == nil {
		return nil
	}
	// The branch exists (a task's retry): --force again, as the files
	// are still the last task's (ResetWorktree).
	_, err = wt.run(ctx, "checkout", "--quiet", "--force", branch)
	return err
}

// ReuseWorktree makes the linked worktree at path, whose git directory is
// pin's and whose files and state a loop left, what `git worktree add -B
// branch path commit` would make: on branch, created or moved to commit,
// its tracked files as commit has them and nothing else, in two processes
// where an add takes four (and writes every file). Its git directory's
// own state goes first, so that nothing a loop left there is read.
// path's HEAD must not hold branch's name in another worktree.
func (g Repo) ReuseWorktree(ctx context.Context, pin Pin, path, branch, commit string) error {
	if err := cutGitDir(pin); err != nil {
		return err
	}
	wt := Repo{Dir: path, Pin: pin}
	if _, err := wt.run(ctx, "checkout", "--quiet", "--force", "-B", branch, commit); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(path, ".gitmodules")); err == nil {
		return fmt.Errorf("the worktree %s has submodules", path)
	}
	_, err := wt.run(ctx, "clean", "--quiet", "-ffdx")
	return err
}

// cutGitDir leaves a worktree's git directory with only its own files
// (worktreeOwnFiles): whatever state a loop left there goes.
func cutGitDir(pin Pin) error {
	entries, err := os.ReadDir(pin.GitDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !slices.Contains(worktreeOwnFiles, e.Name()) {
			if err := os.RemoveAll(filepath.Join(pin.GitDir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

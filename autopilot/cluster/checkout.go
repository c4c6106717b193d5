package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/tasks"
)

// TaskBranch is the branch a worker pushes task id's result to when its
// loop ends.
func TaskBranch(id string) string { return "ralph/" + id }

// MergeRef is the commit a retry of task id merges into its work before
// its loop starts (Task.MergeCommit), on the shared remote.
func MergeRef(id string) string { return "refs/ralph/merge/" + id }

// WIPRef is task id's work in progress on the shared remote, pushed after
// every iteration: another worker continues from it when this one dies.
func WIPRef(id string) string { return "refs/ralph/wip/" + id }

// Checkouts are a worker's copies of the repositories it works on: under
// Dir, one bare clone per repository URL (repos/), and one worktree per
// task it runs (tasks/), which a later task may reuse (PrepareFrom). A
// worker works only on repositories in Allow.
type Checkouts struct {
	Dir   string
	Allow []string
}

// ErrNotAllowed is a task for a repository outside the worker's allow list.
var ErrNotAllowed = errors.New("repository not in this worker's allow list")

// Allowed says whether the worker may work on the repository at url.
func (c Checkouts) Allowed(url string) error {
	if slices.Contains(c.Allow, strings.TrimRight(url, "/")) || slices.Contains(c.Allow, url) {
		return nil
	}
	return fmt.Errorf("%w: %s (allowed: %s; add it with --allow-remote)", ErrNotAllowed, url, allowList(c.Allow))
}

func allowList(urls []string) string {
	if len(urls) == 0 {
		return "none"
	}
	return strings.Join(urls, ", ")
}

// Checkout is one task's worktree, ready for its loop.
type Checkout struct {
	Dir string
	// Start is the commit the worktree starts at: the task's base commit,
	// or the last work in progress a worker pushed for it.
	Start string
	// Continued says Start is pushed work in progress, not the base.
	Continued bool
	// Pin is where the worktree's repository is, as the worker made it:
	// the worker's git there, and the loop's, never follow the worktree's
	// .git file, which its agent can rewrite (see git.Pin).
	Pin git.Pin
}

// Repo is co's worktree as the worker's git works in it.
func (co Checkout) Repo() git.Repo { return git.Repo{Dir: co.Dir, Pin: co.Pin} }

// Prepare makes task id's worktree from the repository at url: the
// repository's clone is made on first use, and the worktree starts at the
// last work in progress pushed for the task, or else at base. A worktree
// a previous worker process left for the task is replaced: what was not
// pushed is not trusted.
func (c Checkouts) Prepare(ctx context.Context, id, url, base string) (Checkout, error) {
	return c.PrepareFrom(ctx, Checkout{}, id, url, base)
}

// PrepareFrom is Prepare reusing spare, the worktree of an earlier task
// of the same repository whose loop has ended and whose work was pushed:
// moved to the task's place and reset to its start, it costs two git
// processes and the files that differ, where `git worktree add` costs
// four and every file, and a worker's worktrees no longer pile up one a
// task. A spare that is not reused is removed; a zero spare is none.
func (c Checkouts) PrepareFrom(ctx context.Context, spare Checkout, id, url, base string) (Checkout, error) {
	if err := tasks.ValidID(id); err != nil {
		return Checkout{}, err
	}
	if err := c.Allowed(url); err != nil {
		return Checkout{}, err
	}
	unlock, err := c.lock(ctx, url)
	if err != nil {
		return Checkout{}, err
	}
	defer unlock()
	repo, err := c.clone(ctx, url)
	if err != nil {
		return Checkout{}, err
	}
	start, err := c.start(ctx, repo, id, url, base)
	if err != nil {
		if spare.Dir != "" {
			_ = repo.RemoveWorktree(ctx, spare.Dir)
		}
		return Checkout{}, err
	}
	dir := filepath.Join(c.Dir, "tasks", id)
	if spare.Dir != "" && c.reuse(ctx, repo, spare, dir, TaskBranch(id), start) {
		return Checkout{Dir: dir, Start: start, Continued: start != base, Pin: spare.Pin}, nil
	}
	if _, err := os.Lstat(dir); err == nil {
		if err := repo.RemoveWorktree(ctx, dir); err != nil {
			return Checkout{}, err
		}
	}
	if err := addWorktree(ctx, repo, dir, TaskBranch(id), start); err != nil {
		return Checkout{}, err
	}
	pin, err := c.pin(repo, dir)
	if err != nil {
		return Checkout{}, err
	}
	return Checkout{Dir: dir, Start: start, Continued: start != base, Pin: pin}, nil
}

// reuse moves spare to dir, in place of what a previous worker process
// left there, and resets it to start on branch; it says whether it could.
// A spare that could not be reused is removed. The clone's lock is held.
func (c Checkouts) reuse(ctx context.Context, repo git.Repo, spare Checkout, dir, branch, start string) bool {
	at := spare.Dir
	err := func() error {
		if filepath.Clean(at) != filepath.Clean(dir) {
			if _, err := os.Lstat(dir); err == nil {
				if err := repo.RemoveWorktree(ctx, dir); err != nil {
					return err
				}
			}
			if err := repo.MoveWorktree(spare.Pin, at, dir); err != nil {
				return err
			}
			at = dir
		}
		return repo.ReuseWorktree(ctx, spare.Pin, dir, branch, start)
	}()
	if err == nil {
		return true
	}
	// Not what a spare should be: gone, with git's record of it.
	_ = repo.RemoveWorktree(ctx, at)
	_ = repo.PruneWorktrees(ctx)
	return false
}

// start fetches task id's start into the clone and says which commit it
// is: its last work in progress, or else base. The coordinator pushes a
// task's start as its work in progress before it sends the task, so one
// fetch of that ref is all a task needs; the remote's branches are
// fetched only for a task that has none (its work was cleaned up, or
// another coordinator sent it), to find base.
func (c Checkouts) start(ctx context.Context, repo git.Repo, id, url, base string) (string, error) {
	wip := WIPRef(id)
	fetchErr := repo.Fetch(ctx, url, "+"+wip+":"+wip)
	if fetchErr == nil {
		start, err := repo.Resolve(ctx, wip)
		if err != nil {
			return "", fmt.Errorf("task %s's work in progress: %w", id, err)
		}
		return start, nil
	}
	// The fetch fails the same way for a ref the remote lacks and for a
	// remote out of reach; only the first may start at base, or a worker
	// would redo work another pushed.
	if pushed, err := repo.RemoteRef(ctx, url, wip); err != nil || pushed != "" {
		return "", fmt.Errorf("fetch task %s's work in progress: %w", id, errors.Join(fetchErr, err))
	}
	if _, err := repo.Resolve(ctx, base); err != nil {
		// Into remote-tracking refs: the clone's own branches are the
		// tasks' worktrees', which a fetch may not move.
		if err := repo.Fetch(ctx, url, "+refs/heads/*:refs/remotes/origin/*"); err != nil {
			return "", fmt.Errorf("fetch %s: %w", url, err)
		}
	}
	if _, err := repo.Resolve(ctx, base); err != nil {
		return "", fmt.Errorf("task %s starts at %s, which %s does not have: %w", id, base, url, err)
	}
	return base, nil
}

// addWorktree checks out a new worktree at dir on branch at start. Only
// when the add fails are git's records of worktrees gone pruned and the
// add tried again: a worktree whose directory was deleted, or one that
// still has branch checked out, would refuse it; a prune every task would
// read every worktree's records for nothing.
func addWorktree(ctx context.Context, repo git.Repo, dir, branch, start string) error {
	if err := repo.AddWorktreeAt(ctx, dir, branch, start); err == nil || ctx.Err() != nil {
		return err
	}
	if err := repo.PruneWorktrees(ctx); err != nil {
		return err
	}
	return repo.AddWorktreeAt(ctx, dir, branch, start)
}

// pin is the Pin of the worktree at dir of the clone repo: the clone is
// its own common directory, as it is bare.
func (c Checkouts) pin(repo git.Repo, dir string) (git.Pin, error) {
	common, err := filepath.Abs(repo.Dir)
	if err != nil {
		return git.Pin{}, err
	}
	return git.WorktreePinIn(common, dir)
}

// MergeInto merges commit, which the shared remote at url has as task
// id's MergeRef, into the worktree co, leaving any conflict for the loop
// to resolve; nothing when co already has it (work in progress that
// resolved the merge).
func (c Checkouts) MergeInto(ctx context.Context, co Checkout, id, url, commit string) error {
	if err := c.fetchMerge(ctx, id, url, commit); err != nil {
		return err
	}
	wt := co.Repo()
	if done, err := wt.IsAncestor(ctx, commit, "HEAD"); err != nil || done {
		return err
	}
	_, err := wt.MergeNoCommit(ctx, commit, false)
	return err
}

// fetchMerge brings commit, task id's MergeRef at url, into the clone.
func (c Checkouts) fetchMerge(ctx context.Context, id, url, commit string) error {
	unlock, err := c.lock(ctx, url)
	if err != nil {
		return err
	}
	defer unlock()
	repo := c.repo(url)
	if _, err := repo.Resolve(ctx, commit); err == nil {
		return nil
	}
	if err := repo.Fetch(ctx, url, "+"+MergeRef(id)+":"+MergeRef(id)); err != nil {
		return fmt.Errorf("fetch the commit task %s merges: %w", id, err)
	}
	return nil
}

// repo is the worker's bare clone of url, made or not.
func (c Checkouts) repo(url string) git.Repo {
	sum := sha256.Sum256([]byte(url))
	return git.Repo{Dir: filepath.Join(c.Dir, "repos", hex.EncodeToString(sum[:8])+".git")}
}

// lock holds url's clone for one slot until the returned function is
// called: git's worktree commands (a prune beside an add) and fetches into
// one repository do not go well together. A file lock, so that worker
// processes sharing the directory take turns too.
func (c Checkouts) lock(ctx context.Context, url string) (func(), error) {
	path := strings.TrimSuffix(c.repo(url).Dir, ".git") + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	fl := flock.New(path)
	if _, err := fl.TryLockContext(ctx, 50*time.Millisecond); err != nil {
		return nil, fmt.Errorf("wait for the clone of %s: %w", url, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// clone is the worker's bare clone of url, made if it is not there yet;
// its lock is held. It is fetched into for each task (start), only what
// that task needs.
func (c Checkouts) clone(ctx context.Context, url string) (git.Repo, error) {
	repo := c.repo(url)
	if _, err := os.Stat(repo.Dir); errors.Is(err, os.ErrNotExist) {
		return repo, cloneAtomically(ctx, repo.Dir, url)
	}
	return repo, nil
}

// cloneAtomically clones url, bare, to dir: into a directory of its own
// first, renamed into place once whole, so that a slot (or another worker
// process sharing the directory) preparing a task of the same repository
// at the same moment never fetches into a clone still being made. The
// first to finish wins; the others drop theirs.
func cloneAtomically(ctx context.Context, dir, url string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".clone-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := (git.Repo{Dir: tmp}).CloneBare(ctx, url); err != nil {
		return fmt.Errorf("clone %s: %w", url, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil // another made it first
		}
		return fmt.Errorf("clone %s: %w", url, err)
	}
	return nil
}

// PushProgress pushes the worktree's HEAD as task id's work in progress.
func PushProgress(ctx context.Context, co Checkout, url, id string) error {
	return co.Repo().Push(ctx, url, "+HEAD:"+WIPRef(id))
}

// PushResult pushes the worktree's HEAD as task id's branch, for the
// coordinator to merge, and returns the commit pushed. It is pushed as the
// task's work in progress too, in the same push: a worker that dies before
// its result is sent leaves the next one the finished work to continue
// from, and the last iteration's work in progress needs no push of its
// own.
func PushResult(ctx context.Context, co Checkout, url, id string) (string, error) {
	repo := co.Repo()
	head, err := repo.Resolve(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	if err := repo.Push(ctx, url, "+"+head+":refs/heads/"+TaskBranch(id), "+"+head+":"+WIPRef(id)); err != nil {
		return "", err
	}
	return head, nil
}

package git

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The methods in this file change a repository: branches, worktrees,
// merges and ralph's own commits. The autopilot uses them to give each
// task a worktree, merge finished work and record tracker changes.

// noHooks runs git without the repository's hooks. ralph's own commits
// (merges, tracker updates) are bookkeeping: trackers install hooks that
// rewrite their own tracked files on every commit and merge, which would
// leave the user's checkout dirty behind ralph's back.
//
// Nor does git run its automatic maintenance after them: it would start a
// `git maintenance run --auto` for each of the autopilot's several commits
// a task, on the one goroutine every task waits for, for the few objects
// each adds; the commits of the tasks' agents (and the user's) still run
// it in the same object store.
var noHooks = []string{"-c", "core.hooksPath=" + os.DevNull, "-c", "maintenance.auto=false"}

// identity commits as the user when git knows who that is, and as ralph
// otherwise, so that a machine without user.email set does not stop the
// merge queue.
func (g Repo) identity(ctx context.Context) []string {
	if _, known := knownIdentity.Load(g.Dir); known {
		return nil
	}
	if _, err := g.run(ctx, "var", "GIT_COMMITTER_IDENT"); err == nil {
		knownIdentity.Store(g.Dir, true)
		return nil
	}
	return []string{"-c", "user.name=ralph", "-c", "user.email=ralph@localhost"}
}

// knownIdentity holds the directories whose git knows who commits: the
// autopilot commits there several times a task, and a user who was
// known stays known. One that was not is asked again, as the user may
// set it meanwhile.
var knownIdentity sync.Map

// CurrentBranch is the branch checked out in Dir; "" for a detached HEAD.
func (g Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode == 1 {
		return "", nil
	}
	return strings.TrimSpace(string(out)), err
}

// Root is the top directory of the working tree Dir is in.
func (g Repo) Root(ctx context.Context) (string, error) {
	out, err := g.run(ctx, "rev-parse", "--show-toplevel")
	return strings.TrimSpace(string(out)), err
}

// Resolve is the commit rev names; an error when it names none. A branch
// (refs/heads/…) is read from the repository's files where they say it
// plainly (readBranch), with no git process.
func (g Repo) Resolve(ctx context.Context, rev string) (string, error) {
	if hash, ok := g.readBranch(rev); ok {
		return hash, nil
	}
	out, err := g.run(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", &gitError{sub: "rev-parse", err: err, stderr: "no commit named " + rev}
	}
	return strings.TrimSpace(string(out)), nil
}

// BranchExists reports whether refs/heads/name exists.
func (g Repo) BranchExists(ctx context.Context, name string) bool {
	_, err := g.run(ctx, "show-ref", "--verify", "--quiet", "refs/heads/"+name)
	return err == nil
}

// IsAncestor reports whether commit a is reachable from commit b.
func (g Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := g.run(ctx, "merge-base", "--is-ancestor", a, b)
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// AddWorktree checks out a new worktree at path on branch. A branch that
// does not exist yet is created at base; an existing one is checked out as
// it is, so that a task's work survives a restart. A worktree that was
// registered at path and deleted (a removal cut short) is forgotten first.
func (g Repo) AddWorktree(ctx context.Context, path, branch, base string) error {
	// The common case first: a new branch, nothing registered at path.
	if _, err := g.run(ctx, "worktree", "add", "--quiet", "-b", branch, path, base); err == nil {
		return nil
	}
	if _, err := g.run(ctx, "worktree", "prune"); err != nil {
		return err
	}
	if g.BranchExists(ctx, branch) {
		_, err := g.run(ctx, "worktree", "add", "--quiet", path, branch)
		return err
	}
	_, err := g.run(ctx, "worktree", "add", "--quiet", "-b", branch, path, base)
	return err
}

// IsWorktreeRoot reports whether path is the top of a working tree of
// Dir's repository: a worktree that a removal cut short is not.
func (g Repo) IsWorktreeRoot(ctx context.Context, path string) bool {
	if _, err := os.Lstat(path); err != nil {
		return false
	}
	top, err := Repo{Dir: path}.Root(ctx)
	if err != nil {
		return false
	}
	common, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false
	}
	theirs, err := Repo{Dir: path}.run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	return err == nil && sameFile(top, path) && sameFile(strings.TrimSpace(string(common)), strings.TrimSpace(string(theirs)))
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// AddDetachedWorktree checks out commit at path without a branch, for
// work that must not move any branch until it is known to be good.
func (g Repo) AddDetachedWorktree(ctx context.Context, path, commit string) error {
	_, err := g.run(ctx, "worktree", "add", "--quiet", "--detach", path, commit)
	return err
}

// RemoveWorktree removes the worktree at path, with whatever it holds,
// and forgets it. A path that is no worktree is not an error.
func (g Repo) RemoveWorktree(ctx context.Context, path string) error {
	if _, err := os.Lstat(path); err != nil {
		// Nothing to remove; a registration left behind is pruned.
		_, err = g.run(ctx, "worktree", "prune")
		return err
	}
	_, err := g.run(ctx, "worktree", "remove", "--force", "--force", path)
	if err == nil {
		// git forgot it with its files.
		return nil
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		if rmErr := os.RemoveAll(path); rmErr != nil {
			return err
		}
	}
	_, err = g.run(ctx, "worktree", "prune")
	return err
}

// DeleteBranch deletes a branch whatever it holds; a missing branch is not
// an error.
func (g Repo) DeleteBranch(ctx context.Context, name string) error {
	_, err := g.run(ctx, "branch", "--quiet", "-D", name)
	if err != nil && ctx.Err() == nil && !g.BranchExists(ctx, name) {
		return nil
	}
	return err
}

// Changed lists the paths whose working-tree state differs from HEAD,
// limited to paths (all of the tree when none are given), untracked files
// included; ralph's own directory is never listed.
func (g Repo) Changed(ctx context.Context, paths ...string) ([]string, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--"}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	args = append(args, paths...)
	args = append(args, ":(exclude)"+StateDir)
	out, err := g.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseStatusZ(out), nil
}

// parseStatusZ reads `git status --porcelain=v1 -z`: "XY path\0", with a
// rename's or copy's source path in the next field.
func parseStatusZ(out []byte) []string {
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' {
			i++
		}
	}
	return paths
}

// CommitPaths commits the current state of paths (added, changed or
// deleted) with message, and nothing else the index may hold. It reports
// whether there was anything to commit.
func (g Repo) CommitPaths(ctx context.Context, message string, paths ...string) (bool, error) {
	args := append(append(noHooks, g.identity(ctx)...), "commit", "--quiet", "--no-verify", "-m", message, "--")
	commit := append(args, paths...)
	// A commit of paths takes their content from the work tree, as an
	// add would, but only for files git tracks: when each path is a file,
	// the commit alone is tried first (an autopilot's close of a task in
	// a checklist or prd.json, once a task: one git process, not two). A
	// file git does not track yet fails it, and the add below follows; a
	// directory could hold a new file the commit would leave out.
	if g.allFiles(paths) {
		if _, err := g.run(ctx, commit...); err == nil {
			return true, nil
		}
	}
	// Callers commit what they know changed: the add and the commit say
	// so, and only when one of them fails is git asked whether there was
	// anything to commit (a commit of nothing fails, as does the add of a
	// path that is not there).
	_, err := g.run(ctx, append([]string{"add", "--all", "--"}, paths...)...)
	if err == nil {
		if _, err = g.run(ctx, commit...); err == nil {
			return true, nil
		}
	}
	changed, cerr := g.Changed(ctx, paths...)
	switch {
	case cerr != nil:
		return false, errors.Join(err, cerr)
	case len(changed) == 0:
		return false, nil
	}
	return false, err
}

// allFiles reports whether every one of paths (relative to Dir) is a
// regular file: not a directory, a pathspec, or a path that is not there.
func (g Repo) allFiles(paths []string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, ":") {
			return false
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.Dir, p)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return len(paths) > 0
}

// MergeResult is how a merge into Dir's HEAD went.
type MergeResult struct {
	// Conflicts are the paths git could not merge; the merge is still in
	// progress when there are any.
	Conflicts []string
}

// MergeNoCommit merges branch into HEAD without committing, so the caller
// can adjust the result before CommitMerge.
func (g Repo) MergeNoCommit(ctx context.Context, branch string, squash bool) (MergeResult, error) {
	args := append(append([]string{}, noHooks...), "merge", "--no-commit", "--quiet")
	if squash {
		args = append(args, "--squash")
	} else {
		args = append(args, "--no-ff")
	}
	_, err := g.run(ctx, append(args, branch)...)
	if err == nil {
		return MergeResult{}, nil
	}
	conflicts, cerr := g.Conflicts(ctx)
	if cerr == nil && len(conflicts) > 0 {
		return MergeResult{Conflicts: conflicts}, nil
	}
	return MergeResult{}, err
}

// Conflicts lists the paths with unresolved merge conflicts.
func (g Repo) Conflicts(ctx context.Context) ([]string, error) {
	out, err := g.run(ctx, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil, err
	}
	var paths []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// TakePaths sets paths, in the index and the working tree, to how they
// are in commit: present there, they are checked out; absent, they are
// removed. Resolves conflicts on those paths in commit's favour.
func (g Repo) TakePaths(ctx context.Context, commit string, paths ...string) error {
	for _, p := range paths {
		if _, err := g.run(ctx, "cat-file", "-e", commit+":"+p); err == nil {
			if _, err := g.run(ctx, "checkout", commit, "--", p); err != nil {
				return err
			}
			continue
		}
		if _, err := g.run(ctx, "rm", "-r", "-q", "-f", "--ignore-unmatch", "--", p); err != nil {
			return err
		}
	}
	return nil
}

// CommitAll commits everything staged and changed in Dir with message,
// without the repository's hooks; it reports whether there was anything
// to commit.
func (g Repo) CommitAll(ctx context.Context, message string) (bool, error) {
	if _, err := g.run(ctx, "add", "--all"); err != nil {
		return false, err
	}
	if _, err := g.run(ctx, "diff", "--cached", "--quiet"); err == nil && !g.merging(ctx) {
		return false, nil
	}
	args := append(append(noHooks, g.identity(ctx)...), "commit", "--quiet", "--no-verify", "-m", message)
	_, err := g.run(ctx, args...)
	return err == nil, err
}

// merging reports whether a merge is in progress (MERGE_HEAD exists).
func (g Repo) merging(ctx context.Context) bool {
	_, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	return err == nil
}

// AbortMerge abandons a merge in progress; none in progress is no error.
func (g Repo) AbortMerge(ctx context.Context) error {
	if !g.merging(ctx) {
		return nil
	}
	_, err := g.run(ctx, "merge", "--abort")
	return err
}

// AbortRebase abandons a rebase in progress (one a killed ralph left);
// none in progress is no error.
func (g Repo) AbortRebase(ctx context.Context) error {
	for _, dir := range []string{"rebase-merge", "rebase-apply"} {
		out, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-path", dir)
		if err != nil {
			return err
		}
		if _, err := os.Stat(strings.TrimSpace(string(out))); err == nil {
			_, err := g.run(ctx, "rebase", "--abort")
			return err
		}
	}
	return nil
}

// Rebase rebases the branch checked out in Dir onto onto. On a conflict
// the rebase is abandoned, Dir is as before, and the conflicting paths
// are returned.
func (g Repo) Rebase(ctx context.Context, onto string) ([]string, error) {
	args := append(append(noHooks, g.identity(ctx)...), "rebase", "--quiet", onto)
	_, err := g.run(ctx, args...)
	if err == nil {
		return nil, nil
	}
	conflicts, cerr := g.Conflicts(ctx)
	_, _ = g.run(ctx, "rebase", "--abort")
	if cerr == nil && len(conflicts) > 0 {
		return conflicts, nil
	}
	return nil, err
}

// FastForward moves the branch checked out in Dir, and its working tree,
// to commit, which must descend from it. It fails rather than lose a
// change: a diverged branch is an error, and uncommitted files in the way
// (untracked files where commit has some, local changes to files it
// changes) are an *OverwriteError that names them. Uncommitted files out
// of the way stay as they are.
func (g Repo) FastForward(ctx context.Context, commit string) error {
	_, err := g.run(ctx, append(noHooks, "merge", "--ff-only", "--quiet", commit)...)
	if err != nil && ctx.Err() == nil {
		if e := g.inTheWay(ctx, commit, err); e != nil {
			return e
		}
	}
	return err
}

// HasMerges reports whether rev holds merge commits that base does not.
func (g Repo) HasMerges(ctx context.Context, base, rev string) (bool, error) {
	out, err := g.run(ctx, "rev-list", "--merges", "--max-count=1", rev, "^"+base, "--")
	return len(bytes.TrimSpace(out)) > 0, err
}

// CommitAllowEmpty commits everything staged and changed in Dir with
// message, even when that is nothing, without the repository's hooks.
func (g Repo) CommitAllowEmpty(ctx context.Context, message string) error {
	if _, err := g.run(ctx, "add", "--all"); err != nil {
		return err
	}
	args := append(append(noHooks, g.identity(ctx)...), "commit", "--quiet", "--no-verify", "--allow-empty", "-m", message)
	_, err := g.run(ctx, args...)
	return err
}

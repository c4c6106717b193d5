package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/fileholders"
)

// TaskTrailer is the commit trailer that names the task a merge brought
// onto the base branch ("Ralph-Task: <id>"): the base branch itself then
// says which tasks are merged, so that a result delivered twice, or a
// coordinator that restarts mid-merge, never merges a task again.
const TaskTrailer = "Ralph-Task"

// MergeSubject is the subject of the commit by which ralph lands a task on
// the base branch, whatever the merge mode.
func MergeSubject(task, title string) string {
	return fmt.Sprintf("ralph: merge %s (%s)", task, title)
}

// WithTaskTrailer appends the trailer naming task to a commit message.
func WithTaskTrailer(message, task string) string {
	return strings.TrimRight(message, "\n") + "\n\n" + TaskTrailer + ": " + task + "\n"
}

// MergedTasks maps each task that ralph's own merge commits on rev's
// first-parent line name, past exclude ("" for all of rev's history), to
// the newest of them. A commit is ralph's when its subject is
// MergeSubject's for the task its TaskTrailer names and it is on the
// first-parent line: an agent's commits arrive as a merge's second parent,
// are squashed into ralph's commit, or (rebased) keep the agent's own
// subject, so a trailer an agent wrote, copying ralph's, names nothing.
func (g Repo) MergedTasks(ctx context.Context, exclude, rev string) (map[string]string, error) {
	// One record per commit: hash, subject, then the trailer's values,
	// each on a line; NUL ends the record, since no value holds one.
	format := "--format=%H%n%s%n%(trailers:key=" + TaskTrailer + ",valueonly,unfold)%x00"
	args := []string{"log", "--first-parent", "--grep=^" + TaskTrailer + ": ", format, rev}
	if exclude != "" {
		args = append(args, "^"+exclude)
	}
	out, err := g.run(ctx, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	merged := map[string]string{}
	for record := range bytes.SplitSeq(out, []byte{0}) {
		lines := strings.Split(strings.TrimSpace(string(record)), "\n")
		if len(lines) < 3 {
			continue
		}
		hash, subject := lines[0], lines[1]
		for _, task := range lines[2:] {
			task = strings.TrimSpace(task)
			if task != "" && merged[task] == "" && strings.HasPrefix(subject, "ralph: merge "+task+" (") {
				merged[task] = hash
			}
		}
	}
	return merged, nil
}

// NamesTasks reports whether a commit reachable from rev and not from base
// carries a TaskTrailer: an agent's commit that copied ralph's.
func (g Repo) NamesTasks(ctx context.Context, base, rev string) (bool, error) {
	out, err := g.run(ctx, "log", "--max-count=1", "--format=%H", "--grep=^"+TaskTrailer+": ", rev, "^"+base, "--")
	return len(bytes.TrimSpace(out)) > 0, err
}

// ConflictMarkers lists, as "path:line", the conflict markers that the
// changes from commit from to commit to bring in (git diff --check's
// "leftover conflict marker"); markers that were already in from are not
// listed. Whitespace errors are not conflict markers and are ignored.
func (g Repo) ConflictMarkers(ctx context.Context, from, to string) ([]string, error) {
	return g.markers(ctx, from, to)
}

// UnresolvedChanges lists what keeps Dir's uncommitted work from being
// committed as it is: paths a merge left unmerged ("path (unmerged)") and
// conflict markers ("path:line") the work tree has that HEAD has not.
func (g Repo) UnresolvedChanges(ctx context.Context) ([]string, error) {
	unmerged, err := g.Conflicts(ctx)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, p := range unmerged {
		found = append(found, p+" (unmerged)")
	}
	markers, err := g.markers(ctx, "HEAD")
	return append(found, markers...), err
}

// markers runs git diff --check on what revs compare: it exits 2 with a
// report when it finds a problem.
func (g Repo) markers(ctx context.Context, revs ...string) ([]string, error) {
	args := append(append([]string{"diff", "--check", "--no-color"}, revs...), "--")
	_, err := g.run(ctx, args...)
	var ge *gitError
	switch {
	case err == nil:
		return nil, nil
	case !errors.As(err, &ge) || ge.exitCode != 2:
		return nil, err
	}
	return leftoverMarkers(ge.stdout), nil
}

// leftoverMarkers reads git diff --check's report: "path:line: what." and
// the offending line after it.
func leftoverMarkers(report []byte) []string {
	var found []string
	for line := range strings.Lines(string(report)) {
		where, what, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if ok && strings.HasPrefix(what, "leftover conflict marker") {
			found = append(found, where)
		}
	}
	return found
}

// DiffNames lists the paths that differ between commits a and b.
func (g Repo) DiffNames(ctx context.Context, a, b string) ([]string, error) {
	out, err := g.run(ctx, "diff", "--name-only", "-z", "--no-renames", a, b, "--")
	if err != nil {
		return nil, err
	}
	var names []string
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p != "" {
			names = append(names, p)
		}
	}
	return names, nil
}

// HalfForwarded reports whether Dir's checkout is a fast-forward from
// base to commit cut off half-way (a machine that went down during git's
// update of the work tree): HEAD is still base, and every path that
// differs from it is one the fast-forward changes, already as commit has
// it, or an untracked file the fast-forward does not touch. Finishing it
// (ResetHard to commit) then loses nothing.
func (g Repo) HalfForwarded(ctx context.Context, base, commit string) (bool, error) {
	if head, err := g.Head(ctx); err != nil || head != base {
		return false, err
	}
	dirty, err := g.Uncommitted(ctx)
	if err != nil || len(dirty) == 0 {
		return false, err
	}
	names, err := g.DiffNames(ctx, base, commit)
	if err != nil {
		return false, err
	}
	written := 0
	for p, st := range dirty {
		switch {
		case !slices.Contains(names, p) && st.Untracked():
			continue // the user's, and in nobody's way
		case !slices.Contains(names, p):
			return false, nil
		}
		if same, err := g.asIn(ctx, commit, p); err != nil || !same {
			return false, err
		}
		written++
	}
	return written > 0, nil
}

// asIn reports whether the work tree's path is as commit has it: the same
// content, or absent from both.
func (g Repo) asIn(ctx context.Context, commit, path string) (bool, error) {
	want, err := g.run(ctx, "rev-parse", "--verify", "--quiet", commit+":"+path)
	if err != nil {
		want = nil // not in commit
	}
	if _, statErr := os.Lstat(filepath.Join(g.Dir, path)); statErr != nil {
		return want == nil, nil
	}
	if want == nil {
		return false, nil
	}
	got, err := g.run(ctx, "hash-object", "--", path)
	return err == nil && bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)), err
}

// StaleIndexLock is the index.lock of Dir's work tree when one is there
// and nothing has it open: left by a git process that was killed (a
// machine that went down during an agent's commit), it fails every git
// command that writes the index until it is removed. "" otherwise, or
// where it cannot be told (not a repository, a system without /proc, a
// lock another user made).
func (g Repo) StaleIndexLock(ctx context.Context) string {
	return StaleLock(g.IndexLockPath(ctx))
}

// IndexLockPath is where git would put the index.lock of Dir's work tree;
// "" when Dir is not a repository.
func (g Repo) IndexLockPath(ctx context.Context) string {
	if path, ok := g.pinnedPath("index.lock"); ok {
		return path
	}
	out, err := g.run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index.lock")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// CommitLocks are the lock files a commit in Dir's work tree takes: the
// index's, HEAD's and its branch's ref's (none for a detached HEAD). A git
// killed during a commit leaves one of them, and every later commit fails
// on it ("remove the file manually to continue"). None when Dir is not a
// repository.
//
// It is one git process, run as every loop starts, or none in a pinned
// worktree (an autopilot's slot), whose paths ralph knows; a branch with
// no commit yet, which rev-parse cannot name, costs a second.
func (g Repo) CommitLocks(ctx context.Context) []string {
	if locks, ok := g.pinnedCommitLocks(); ok {
		return locks
	}
	paths := []string{"rev-parse", "--path-format=absolute", "--git-path", "index.lock", "--git-path", "HEAD.lock", "--git-common-dir"}
	out, err := g.run(ctx, append(paths, "--symbolic-full-name", "HEAD")...)
	if err != nil {
		out, err = g.run(ctx, paths...)
		if err != nil {
			return nil
		}
		if ref, err := g.run(ctx, "symbolic-ref", "-q", "HEAD"); err == nil {
			out = append(out, ref...)
		}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		return nil
	}
	locks := lines[:2]
	// A detached HEAD's name is HEAD: it moves no branch.
	if len(lines) == 4 && strings.HasPrefix(lines[3], "refs/heads/") {
		locks = append(locks, filepath.Join(lines[2], filepath.FromSlash(lines[3])+".lock"))
	}
	return locks
}

// pinnedCommitLocks is CommitLocks of a pinned worktree, from its git
// directory's HEAD file as git reads it; ok is false when HEAD is neither
// a branch nor a commit, which git is then asked about.
func (g Repo) pinnedCommitLocks() ([]string, bool) {
	index, ok := g.pinnedPath("index.lock")
	if !ok {
		return nil, false
	}
	head, err := os.ReadFile(filepath.Join(g.Pin.GitDir, "HEAD"))
	if err != nil {
		return nil, false
	}
	locks := []string{index, filepath.Join(g.Pin.GitDir, "HEAD.lock")}
	line := strings.TrimSuffix(string(head), "\n")
	if ref, ok := strings.CutPrefix(line, "ref: "); ok {
		if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
			return nil, false
		}
		return append(locks, filepath.Join(g.Pin.CommonDir, filepath.FromSlash(ref)+".lock")), true
	}
	if _, ok := objectName([]byte(line)); !ok {
		return nil, false
	}
	return locks, true // detached: it moves no branch
}

// StaleLock is path when it is a lock file of this user's that nothing has
// open; "" otherwise, for no path too. It starts no git process, so it
// can be asked every iteration.
func StaleLock(path string) string {
	if path == "" {
		return ""
	}
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() || !ownedBySelf(info) {
		return ""
	}
	if holders, err := fileholders.Find(path); err != nil || len(holders) > 0 {
		return ""
	}
	return path
}

// MergeTrees merges rev into base without a working tree or an index (git
// merge-tree --write-tree, git 2.38 and later) and returns the tree of
// the result. ok is false when the merge conflicts, or when this git
// cannot merge trees: the caller then merges in a checkout, which says
// what conflicts.
func (g Repo) MergeTrees(ctx context.Context, base, rev string) (tree string, ok bool, err error) {
	out, err := g.run(ctx, "merge-tree", "--write-tree", "--no-messages", base, rev)
	var ge *gitError
	switch {
	case errors.As(err, &ge) && ctx.Err() == nil:
		// 1 is a conflict; anything else an older git's usage error.
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	tree, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	return tree, tree != "", nil
}

// CommitTree makes a commit of tree with parents and message, without
// touching any branch, index or working tree, and returns it.
func (g Repo) CommitTree(ctx context.Context, tree, message string, parents ...string) (string, error) {
	args := append(g.identity(ctx), "commit-tree", tree, "-m", strings.TrimRight(message, "\n"))
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := g.run(ctx, args...)
	return strings.TrimSpace(string(out)), err
}

// SameAt reports whether trees (or commits) a and b hold the same content
// at every one of paths.
func (g Repo) SameAt(ctx context.Context, a, b string, paths ...string) (bool, error) {
	if len(paths) == 0 {
		return true, nil
	}
	_, err := g.run(ctx, append([]string{"diff", "--quiet", "--no-renames", a, b, "--"}, paths...)...)
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

package git

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// RemoteURL is the URL git fetches remote from.
func (g Repo) RemoteURL(ctx context.Context, remote string) (string, error) {
	out, err := g.run(ctx, "remote", "get-url", remote)
	return strings.TrimSpace(string(out)), err
}

// Fetch fetches refspecs from remote (a name or a URL), without tags.
// Every caller names where each ref goes, so FETCH_HEAD is not written:
// fetches into one repository at once (the coordinator's results) would
// otherwise contend for it, and one of them fail on its lock. Nor does
// git start its automatic maintenance after each: ralph fetches a task's
// few commits at a time (a worker its start, the coordinator its
// result), and the commits made in the same object store, its agents'
// and the user's, still run it (see noHooks).
func (g Repo) Fetch(ctx context.Context, remote string, refspecs ...string) error {
	_, err := g.run(ctx, append([]string{"-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote}, refspecs...)...)
	return err
}

// Push pushes refspecs to remote (a name or a URL). A refspec that starts
// with "+" replaces the remote ref even when it does not fast-forward, as
// a work-in-progress ref must.
func (g Repo) Push(ctx context.Context, remote string, refspecs ...string) error {
	if len(refspecs) == 0 {
		return fmt.Errorf("git push %s: no refspec", remote)
	}
	_, err := g.run(ctx, append([]string{"push", "--quiet", remote}, refspecs...)...)
	return err
}

// CloneBare makes a bare clone of url at Dir, which must not exist yet: a
// cache of the repository that worktrees are added to.
func (g Repo) CloneBare(ctx context.Context, url string) error {
	_, err := Repo{Dir: "."}.run(ctx, "clone", "--quiet", "--bare", "--no-tags", url, g.Dir)
	return err
}

// RemoteRef is the commit ref names on remote (a name or a URL); "" when
// the remote has no such ref.
func (g Repo) RemoteRef(ctx context.Context, remote, ref string) (string, error) {
	hashes, err := g.remoteRefs(ctx, remote, ref)
	return hashes[ref], err
}

// remoteRefs maps those of refs (full names) that remote has to their
// commits, asking the remote once.
func (g Repo) remoteRefs(ctx context.Context, remote string, refs ...string) (map[string]string, error) {
	out, err := g.run(ctx, append([]string{"ls-remote", "--refs", remote}, refs...)...)
	if err != nil {
		return nil, err
	}
	hashes := map[string]string{}
	for line := range strings.Lines(string(out)) {
		hash, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		// ls-remote matches its patterns on a name's tail: only the
		// names asked for count.
		if ok && slices.Contains(refs, name) {
			hashes[name] = hash
		}
	}
	return hashes, nil
}

// AddWorktreeAt checks out a new worktree at path on branch, which is
// created at start or moved there if it exists: for work that continues
// from a commit made elsewhere, whatever this repository had on branch.
func (g Repo) AddWorktreeAt(ctx context.Context, path, branch, start string) error {
	_, err := g.run(ctx, "worktree", "add", "--quiet", "-B", branch, path, start)
	return err
}

// AddTaskTrailer amends HEAD's message with the TaskTrailer naming task,
// without the repository's hooks: for a result whose commits were replayed
// (a rebase) rather than merged by a commit of ralph's own.
func (g Repo) AddTaskTrailer(ctx context.Context, task string) error {
	args := append(append(noHooks, g.identity(ctx)...),
		"commit", "--quiet", "--no-verify", "--amend", "--no-edit", "--trailer", TaskTrailer+": "+task)
	_, err := g.run(ctx, args...)
	return err
}

// ResetHard moves the checked-out branch, the index and the work tree to
// commit, dropping whatever was there: for a worktree whose work was done
// elsewhere and arrives as a commit.
func (g Repo) ResetHard(ctx context.Context, commit string) error {
	_, err := g.run(ctx, append(noHooks, "reset", "--hard", "--quiet", commit)...)
	return err
}

// DeleteRemoteRefs deletes those of refs that remote (a name or a URL)
// has; deleting one it lacks is no error.
func (g Repo) DeleteRemoteRefs(ctx context.Context, remote string, refs ...string) error {
	hashes, err := g.remoteRefs(ctx, remote, refs...)
	if err != nil {
		return err
	}
	var specs []string
	for _, ref := range refs {
		if hashes[ref] != "" {
			specs = append(specs, ":"+ref)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	return g.Push(ctx, remote, specs...)
}

// DeleteRef deletes ref (a full name, refs/…).
func (g Repo) DeleteRef(ctx context.Context, ref string) error {
	_, err := g.run(ctx, "update-ref", "-d", ref)
	return err
}

// PushLease sets ref on remote to commit only if the remote's ref is still
// at expect ("": the remote must not have ref): a push made there since is
// refused rather than replaced (git push --force-with-lease). A push that
// only adds to the remote's ref uses no force.
func (g Repo) PushLease(ctx context.Context, remote, commit, ref, expect string) error {
	_, err := g.run(ctx, "push", "--quiet", "--force-with-lease="+ref+":"+expect, remote, commit+":"+ref)
	return err
}

// HasCommit reports whether the repository has commit.
func (g Repo) HasCommit(ctx context.Context, commit string) bool {
	_, err := g.run(ctx, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

package git

import (
	"context"
	"errors"
	"os/exec"
)

// Workspace is what the loop asks of a workspace's files: git's view of
// them in a repository, and the files themselves where git has nothing to
// say (no repository, or no git on the machine), since without a
// fingerprint there no iteration would ever count as progress. It
// remembers the content hashes it computed, so a snapshot reads only the
// files that changed since the last one; copies share that memory.
type Workspace struct {
	git   Repo
	files *Tree
}

// NewWorkspace returns the workspace rooted at dir.
func NewWorkspace(dir string) Workspace {
	return Workspace{git: Repo{Dir: dir}, files: &Tree{Dir: dir}}
}

// Snapshot is HEAD and a fingerprint of the files, from one `git status`
// in a repository and a walk of the files outside one. The choice is made
// on every call: an agent that runs `git init` changes which applies, and
// that is a change too.
func (w Workspace) Snapshot(ctx context.Context) (Snapshot, error) {
	s, err := w.git.snapshot(ctx, w.files)
	switch {
	case err == nil && s.Fingerprint != "":
		return s, nil
	case err != nil && !errors.Is(err, exec.ErrNotFound):
		return Snapshot{}, err
	}
	fp, err := w.files.Fingerprint(ctx)
	return Snapshot{Fingerprint: fp}, err
}

// CommitsBetween lists the commits reachable from head and not from base,
// oldest first (Repo.CommitsBetween).
func (w Workspace) CommitsBetween(ctx context.Context, base, head string) ([]Commit, error) {
	return w.git.CommitsBetween(ctx, base, head)
}

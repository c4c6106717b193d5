package git

import (
	"context"
	"errors"
	"os/exec"
)

// Workspace is what the loop asks of a workspace's files: git's view of
// them in a repository, and the files themselves where git has nothing to
// say (no repository, or no git on the machine), since without a
// fingerprint there no iteration would ever count as progress.
type Workspace struct {
	git  Repo
	tree *Tree
}

// NewWorkspace returns the workspace rooted at dir.
func NewWorkspace(dir string) Workspace {
	return Workspace{git: Repo{Dir: dir}, tree: &Tree{Dir: dir}}
}

// Head is the current commit, "" outside a repository.
func (w Workspace) Head(ctx context.Context) (string, error) { return w.git.Head(ctx) }

// CommitsSince lists the commits reachable from HEAD and not from base,
// oldest first.
func (w Workspace) CommitsSince(ctx context.Context, base string) ([]Commit, error) {
	return w.git.CommitsSince(ctx, base)
}

// Fingerprint is git's view of the work tree in a repository, and a walk
// of the files outside one. The choice is made on every call: an agent
// that runs `git init` changes which applies, and that is a change too.
func (w Workspace) Fingerprint(ctx context.Context) (string, error) {
	fp, err := w.git.Fingerprint(ctx)
	switch {
	case err == nil && fp != "":
		return fp, nil
	case err != nil && !errors.Is(err, exec.ErrNotFound):
		return "", err
	}
	return w.tree.Fingerprint(ctx)
}

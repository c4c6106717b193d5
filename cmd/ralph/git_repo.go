package main

import (
	"context"
	"errors"
	"os/exec"

	"github.com/ralph-loop/ralph/engine"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
)

// gitRepo gives the engine ralph's view of git, and of the files
// themselves where git has nothing to say.
type gitRepo struct {
	git workspacegit.Repo
	// tree fingerprints a workspace that is not a git repository (or a
	// machine without git): without it progress would never be seen
	// there, and every run would end as stuck.
	tree *workspacegit.Tree
}

var _ engine.Repo = gitRepo{}

func newGitRepo(dir string) gitRepo {
	return gitRepo{git: workspacegit.Repo{Dir: dir}, tree: &workspacegit.Tree{Dir: dir}}
}

func (r gitRepo) Head(ctx context.Context) (string, error) { return r.git.Head(ctx) }

// Fingerprint is git's view of the work tree in a repository, and a walk
// of the files outside one. The choice is made on every call: an agent
// that runs `git init` changes which applies, and that is a change too.
func (r gitRepo) Fingerprint(ctx context.Context) (string, error) {
	fp, err := r.git.Fingerprint(ctx)
	switch {
	case err == nil && fp != "":
		return fp, nil
	case err != nil && !errors.Is(err, exec.ErrNotFound):
		return "", err
	}
	return r.tree.Fingerprint(ctx)
}

func (r gitRepo) CommitsSince(ctx context.Context, base string) ([]engine.Commit, error) {
	cs, err := r.git.CommitsSince(ctx, base)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Commit, len(cs))
	for i, c := range cs {
		out[i] = engine.Commit{Hash: c.Hash, Subject: c.Subject}
	}
	return out, nil
}

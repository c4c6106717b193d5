package main

import (
	"context"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/engine"
)

// gitRepo gives the engine criteria's view of git.
type gitRepo struct{ git criteria.Git }

var _ engine.Repo = gitRepo{}

func (r gitRepo) Head(ctx context.Context) (string, error) { return r.git.Head(ctx) }

func (r gitRepo) Fingerprint(ctx context.Context) (string, error) { return r.git.Fingerprint(ctx) }

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

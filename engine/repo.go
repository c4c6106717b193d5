package engine

import "context"

// Commit is one commit made in the workspace.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// Repo is what the engine needs to know about the workspace's version
// control: which commits an iteration made, and whether it changed any
// tracked file (progress, for stuck detection). Implementations read git;
// a workspace that is not a repository reports nothing and no error.
type Repo interface {
	// Head is the current commit, "" when there is none.
	Head(ctx context.Context) (string, error)
	// CommitsSince lists commits reachable from HEAD and not from base,
	// oldest first.
	CommitsSince(ctx context.Context, base string) ([]Commit, error)
	// Fingerprint summarises the state of tracked files (the diff against
	// HEAD and the untracked files), so two calls return the same value
	// exactly when nothing changed.
	Fingerprint(ctx context.Context) (string, error)
}

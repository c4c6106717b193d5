package engine

import (
	"context"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/git"
)

// Commit is one commit made in the workspace.
type Commit = git.Commit

// git.Workspace is the Repo ralph runs with.
var _ Repo = git.Workspace{}

// Repo is what the engine needs to know about the workspace's version
// control: which commits an iteration made, and whether it changed any
// file (progress, for stuck detection). Implementations read git; a
// workspace that is not a repository has no commits and no error, but its
// files must still be fingerprinted, or no iteration there would ever
// count as progress.
type Repo interface {
	// Head is the current commit, "" when there is none.
	Head(ctx context.Context) (string, error)
	// CommitsSince lists commits reachable from HEAD and not from base,
	// oldest first.
	CommitsSince(ctx context.Context, base string) ([]Commit, error)
	// Fingerprint summarises the state of the workspace's files (in a git
	// repository: HEAD, the diff against it and the untracked, not ignored
	// files; elsewhere: the files themselves), leaving .ralph/ out, so two
	// calls return the same value exactly when nothing changed.
	Fingerprint(ctx context.Context) (string, error)
}

func (e *Engine) repoHead(ctx context.Context) string {
	if e.opts.Repo == nil {
		return ""
	}
	head, err := e.opts.Repo.Head(ctx)
	if err != nil {
		e.log.Debug("read the workspace's HEAD", "err", err)
	}
	return head
}

// commitEvents lists, as git.commit lines, the commits made since the
// iteration started: what git says, not what the agent claims.
func (e *Engine) commitEvents() []events.Event {
	if e.opts.Repo == nil {
		return nil
	}
	// The iteration's context may be cancelled; reading git is quick and
	// must still happen so the commits are recorded.
	commits, err := e.opts.Repo.CommitsSince(context.Background(), e.iter.head)
	if err != nil {
		e.opts.Reporter.Warn("cannot list the iteration's commits: " + err.Error())
		return nil
	}
	var out []events.Event
	for _, c := range commits {
		e.opts.Reporter.Commit(e.iter.info, c)
		out = append(out, ralphEvent(TopicCommit, commitRecord{Iteration: e.iter.info.N, Hat: e.iter.info.Hat.ID, Hash: c.Hash, Subject: c.Subject}))
	}
	return out
}

func (e *Engine) repoFingerprint(ctx context.Context) string {
	if e.opts.Repo == nil {
		return ""
	}
	fp, err := e.opts.Repo.Fingerprint(ctx)
	if err != nil {
		e.log.Debug("fingerprint the workspace", "err", err)
	}
	return fp
}

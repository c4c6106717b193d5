package engine

import (
	"context"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// Commit is one commit made in the workspace.
type Commit = git.Commit

// git.Workspace is the Repo ralph runs with.
var _ Repo = git.Workspace{}

// Snapshot is one look at the workspace: HEAD and a fingerprint of its
// files.
type Snapshot = git.Snapshot

// Repo is what the engine needs to know about the workspace's version
// control: which commits an iteration made, and whether it changed any
// file (progress, for stuck detection). Implementations read git; a
// workspace that is not a repository has no commits and no error, but its
// files must still be fingerprinted, or no iteration there would ever
// count as progress.
type Repo interface {
	// Snapshot reads HEAD ("" when there is no commit) and fingerprints
	// the files (leaving .ralph/ out), so two snapshots are equal exactly
	// when nothing was committed or changed.
	Snapshot(ctx context.Context) (Snapshot, error)
	// CommitsBetween lists the commits reachable from head and not from
	// base, oldest first.
	CommitsBetween(ctx context.Context, base, head string) ([]Commit, error)
}

// snapshot looks at the workspace. The look the last iteration ended with
// serves as the next one's start when nothing ran in between (a check's
// command may write files): it saves reading git twice per iteration.
func (e *Engine) snapshot(ctx context.Context) Snapshot {
	if e.opts.Repo == nil || e.gitArmed != nil {
		return Snapshot{}
	}
	if s := e.lastSnapshot; s != nil {
		e.lastSnapshot = nil
		return *s
	}
	s, err := e.opts.Repo.Snapshot(ctx)
	if err != nil {
		e.log.Debug("look at the workspace", "err", err)
	}
	return s
}

// recordTimeout bounds the look at git that records what an iteration
// did. It runs with a context of its own, as the run's may be cancelled
// and what the agent changed must still be recorded, but a git that hangs
// (a lock, a network file system) must not hold the loop forever.
const recordTimeout = 2 * time.Minute

// commitEvents lists, as git.commit lines, the commits made between two
// looks at the workspace: what git says, not what the agent claims. ctx
// is the iteration's own, not the run's (see recordTimeout).
func (e *Engine) commitEvents(ctx context.Context, before, after Snapshot) []events.Event {
	if e.opts.Repo == nil || after.Head == before.Head || e.gitArmed != nil {
		return nil
	}
	commits, err := e.opts.Repo.CommitsBetween(ctx, before.Head, after.Head)
	if err != nil {
		e.opts.Reporter.Warn("cannot list the iteration's commits: " + err.Error())
		return nil
	}
	var out []events.Event
	for _, c := range commits {
		e.opts.Reporter.Commit(e.iter.info, c)
		out = append(out, runfiles.RalphEvent(runfiles.TopicCommit, runfiles.CommitRecord{Iteration: e.iter.info.N, Hat: e.iter.info.Hat.ID, Hash: c.Hash, Subject: c.Subject}))
	}
	return out
}

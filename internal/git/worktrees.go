package git

import (
	"bytes"
	"context"
	"strings"
)

// Worktree is one of a repository's worktrees as `git worktree list
// --porcelain` describes it.
type Worktree struct {
	Path string
	Head string
	// Branch is its branch without refs/heads/, "" when detached.
	Branch string
	// Prunable is why git would prune it (its directory is gone), ""
	// when it would not.
	Prunable string
	Locked   bool
	Bare     bool
}

// Worktrees lists the repository's worktrees, its main one first.
func (g Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := g.run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktrees(out), nil
}

// parseWorktrees reads `git worktree list --porcelain -z`: attributes
// ended by NUL, a worktree's ended by an empty one.
func parseWorktrees(out []byte) []Worktree {
	var list []Worktree
	var cur *Worktree
	for field := range bytes.SplitSeq(out, []byte{0}) {
		key, value, _ := strings.Cut(string(field), " ")
		switch key {
		case "":
			cur = nil
		case "worktree":
			list = append(list, Worktree{Path: value})
			cur = &list[len(list)-1]
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = value
		case "branch":
			cur.Branch = strings.TrimPrefix(value, "refs/heads/")
		case "prunable":
			cur.Prunable = value
			if value == "" {
				cur.Prunable = "its directory is gone"
			}
		case "locked":
			cur.Locked = true
		case "bare":
			cur.Bare = true
		}
	}
	return list
}

// PruneWorktrees forgets the worktrees git considers prunable (their
// directories are gone), as `git worktree prune` does.
func (g Repo) PruneWorktrees(ctx context.Context) error {
	_, err := g.run(ctx, "worktree", "prune")
	return err
}

// Diff is the patch of what rev brings that base does not have (`git diff
// base...rev`). No external diff or textconv program runs: a worktree's
// config is its agent's to write.
func (g Repo) Diff(ctx context.Context, base, rev string) (string, error) {
	out, err := g.run(ctx, "diff", "--no-ext-diff", "--no-textconv", "--no-color", base+"..."+rev, "--")
	return string(out), err
}

// DiffUncommitted is the patch of the uncommitted changes to tracked
// files against HEAD, .ralph/ left out, with no external program run.
func (g Repo) DiffUncommitted(ctx context.Context) (string, error) {
	out, err := g.run(ctx, append([]string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD"}, scope()...)...)
	return string(out), err
}

package main

import (
	"context"
	"errors"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/view"
)

type worktreeCmd struct {
	List  worktreeListCmd  `cmd:"" default:"withargs" help:"List the worktrees ralph made: kind, name, how their loop is, branch, what is not merged, path (the default)."`
	Diff  worktreeDiffCmd  `cmd:"" help:"Show what a worktree holds that its base does not: its branch's commits and their diff, and what is uncommitted."`
	Clean worktreeCleanCmd `cmd:"" help:"Remove the worktrees and branches that are done with; --force also those with work not merged."`
}

func (worktreeCmd) Help() string {
	return `The worktrees ralph made, each on a branch of its own: the loops' run with
ralph loop --worktree (<worktrees_dir>/.loops/NAME on ralph-loop/NAME) and the
autopilot's tasks' (<worktrees_dir>/<id> on ralph/<id>), and the spares an
autopilot run keeps for its next tasks (<worktrees_dir>/.spare/N, detached),
which a killed run leaves; autopilot.worktrees_dir is .worktrees unless set. A
worktree is named by its loop's name or its task's id, or by its branch where a
loop and a task share a name. ralph worktrees is the same command.

Examples:
  ralph worktree
  ralph worktree --json | jq -r '.[] | select(.running) | .name'
  ralph worktree diff fix-typo
  ralph worktree clean
  ralph worktree clean --force fix-typo`
}

type worktreeListCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming autopilot.worktrees_dir (default ./ralph.yml)."`
	JSON   bool     `name:"json" help:"Print them as one JSON array."`
}

func (worktreeListCmd) Help() string {
	return `Lists the worktrees ralph made in this repository, the loops' then the tasks':
each one's kind and name, how its loop is (running and its pid, how its last
run ended, unfinished, or no run yet; for a task's, whether the autopilot has
the task in progress or failed), its branch, what it holds that its base does
not (commits, uncommitted changes) and its path; then the spares a killed
autopilot run left (kind spare), which hold nothing. It changes nothing.

Examples:
  ralph worktree list
  ralph worktree list --json`
}

func (c *worktreeListCmd) Run(ctx context.Context, g *globals) error {
	root, worktrees, err := loopWorktreesOf(ctx, g.Dir, c.Config)
	if err != nil {
		return err
	}
	list, err := autopilot.Worktrees(ctx, root, worktrees, time.Now())
	if err != nil {
		return err
	}
	if c.JSON {
		return indentedJSON(g.stdout, list)
	}
	view.WriteWorktrees(g.stdout, list, g.Dir)
	return nil
}

type worktreeDiffCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming autopilot.worktrees_dir (default ./ralph.yml)."`
	JSON   bool     `name:"json" help:"Print the commits, the diff and what is uncommitted as one JSON object."`
	Name   string   `arg:"" placeholder:"NAME" help:"The worktree: a loop's name, a task's id, or its branch."`
}

func (worktreeDiffCmd) Help() string {
	return `Shows what a worktree of ralph's holds that its base does not: the commits of
its branch that the branch it was made from does not have, with their diff (git
diff BASE...BRANCH, what merging it would bring), then the changes not committed
in the worktree and its untracked files. It changes nothing, and runs no diff
program of the repository's config.

Examples:
  ralph worktree diff fix-typo
  ralph worktree diff ralph/T-12 --json | jq -r '.commits[].subject'`
}

func (c *worktreeDiffCmd) Run(ctx context.Context, g *globals) error {
	if err := autopilot.CheckWorktreeName(c.Name); err != nil {
		return withHint(err, "ralph worktree lists the worktrees by name")
	}
	root, worktrees, err := loopWorktreesOf(ctx, g.Dir, c.Config)
	if err != nil {
		return err
	}
	list, err := autopilot.Worktrees(ctx, root, worktrees, time.Now())
	if err != nil {
		return err
	}
	st, err := autopilot.FindWorktree(list, c.Name)
	if err != nil {
		return err
	}
	d, err := autopilot.DiffWorktree(ctx, root, st)
	if err != nil {
		return err
	}
	if c.JSON {
		return indentedJSON(g.stdout, d)
	}
	view.WriteWorktreeDiff(g.stdout, d)
	return nil
}

type worktreeCleanCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming autopilot.worktrees_dir (default ./ralph.yml)."`
	Force  bool     `help:"Also remove those with commits not merged, uncommitted changes, an unfinished run or a failed task; never one whose loop is running or whose task is in progress."`
	JSON   bool     `name:"json" help:"Print what was removed and kept as one JSON object."`
	Names  []string `arg:"" optional:"" placeholder:"NAME" help:"The worktrees to clean: a loop's name, a task's id, or its branch (default: all)."`
}

func (worktreeCleanCmd) Help() string {
	return `Removes the worktrees ralph made, and their branches, that are done with: whose
loop is not running, whose run is not unfinished (ralph loop --worktree NAME
--resume would go on with it), with nothing uncommitted and every commit merged
into the branch it was made from; a task's also only when the autopilot does not
have the task in progress, nor failed (it goes on from the worktree when it takes
the task again), and not while an autopilot runs in the repository. --force
removes them whatever they hold, but never one whose loop is running or whose
task is in progress. Given no names, it removes the spares a killed autopilot
run left too, unless an autopilot runs in the repository (it takes them for its
next tasks). It says what it removed, and what it kept and why.

Examples:
  ralph worktree clean
  ralph worktree clean fix-typo T-12
  ralph worktree clean --force`
}

// cleanedJSON is `ralph worktree clean --json`.
type cleanedJSON struct {
	Removed []autopilot.WorktreeStatus `json:"removed"`
	Kept    []autopilot.KeptWorktree   `json:"kept"`
}

func (c *worktreeCleanCmd) Run(ctx context.Context, g *globals) error {
	for _, name := range c.Names {
		if err := autopilot.CheckWorktreeName(name); err != nil {
			return withHint(err, "ralph worktree lists the worktrees by name")
		}
	}
	root, worktrees, err := loopWorktreesOf(ctx, g.Dir, c.Config)
	if err != nil {
		return err
	}
	removed, kept, err := autopilot.CleanWorktrees(ctx, root, worktrees, c.Names, c.Force, time.Now())
	if c.JSON {
		out := cleanedJSON{Removed: append([]autopilot.WorktreeStatus{}, removed...), Kept: append([]autopilot.KeptWorktree{}, kept...)}
		return errors.Join(err, indentedJSON(g.stdout, out))
	}
	view.WriteWorktreesCleaned(g.stdout, removed, kept, g.Dir)
	return err
}

// loopWorktreesOf is the root of the checkout dir is in and its worktrees
// directory (autopilot.worktrees_dir of the config, the default without
// one).
func loopWorktreesOf(ctx context.Context, dir string, configs []string) (root, worktrees string, err error) {
	cfg, _, err := config.LoadFiles(dir, configs, configOptions(nil))
	switch {
	case errors.Is(err, config.ErrNotFound) && len(configs) == 0:
		cfg = config.Default()
	case err != nil:
		return "", "", err
	}
	root, err = autopilot.LoopRepo(ctx, dir)
	return root, cfg.Autopilot.WorktreesDir, err
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/view"
)

type worktreesCmd struct {
	List  worktreesListCmd  `cmd:"" default:"withargs" help:"List the loops' worktrees: name, how their loop is, branch, commits not merged, path (the default)."`
	Clean worktreesCleanCmd `cmd:"" help:"Remove the loops' worktrees and branches that are done with; --force also those with work not merged."`
}

func (worktreesCmd) Help() string {
	return `The worktrees of the loops run with ralph loop --worktree, each on a branch of
its own (<worktrees_dir>/.loops/NAME on ralph-loop/NAME; autopilot.worktrees_dir
is .worktrees unless set). The autopilot's task worktrees are the autopilot's:
it removes each once its task has merged.

Examples:
  ralph worktrees
  ralph worktrees --json | jq -r '.[] | select(.running) | .name'
  ralph worktrees clean
  ralph worktrees clean --force fix-typo`
}

type worktreesListCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming autopilot.worktrees_dir (default ./ralph.yml)."`
	JSON   bool     `name:"json" help:"Print them as one JSON array."`
}

func (worktreesListCmd) Help() string {
	return `Lists the loops' worktrees of this repository: each one's name, how its loop is
(running and its pid, how its last run ended, unfinished, or no run yet), its
branch, how many of its commits the branch it was made from does not have, and
its path. It changes nothing.

Examples:
  ralph worktrees list
  ralph worktrees list --json`
}

func (c *worktreesListCmd) Run(ctx context.Context, g *globals) error {
	root, worktrees, err := loopWorktreesOf(ctx, g.Dir, c.Config)
	if err != nil {
		return err
	}
	list, err := autopilot.LoopWorktrees(ctx, root, worktrees, time.Now())
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	view.WriteLoopWorktrees(g.stdout, list, g.Dir)
	return nil
}

type worktreesCleanCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file naming autopilot.worktrees_dir (default ./ralph.yml)."`
	Force  bool     `help:"Also remove those with commits not merged, uncommitted changes or an unfinished run; never one whose loop is running."`
	Names  []string `arg:"" optional:"" placeholder:"NAME" help:"The worktrees to clean (default: all)."`
}

func (worktreesCleanCmd) Help() string {
	return `Removes the loops' worktrees, and their branches, that are done with: whose loop
is not running, whose run is not unfinished (ralph loop --worktree NAME --resume
would go on with it), with nothing uncommitted and every commit merged into the
branch it was made from. --force removes them whatever they hold, but never one
whose loop is running. It says what it removed, and what it kept and why.

Examples:
  ralph worktrees clean
  ralph worktrees clean fix-typo add-json-flag
  ralph worktrees clean --force`
}

func (c *worktreesCleanCmd) Run(ctx context.Context, g *globals) error {
	for _, name := range c.Names {
		if err := autopilot.CheckLoopName(name); err != nil {
			return withHint(err, "ralph worktrees lists the loops' worktrees by name")
		}
	}
	root, worktrees, err := loopWorktreesOf(ctx, g.Dir, c.Config)
	if err != nil {
		return err
	}
	removed, kept, err := autopilot.CleanLoopWorktrees(ctx, root, worktrees, c.Names, c.Force, time.Now())
	view.WriteLoopWorktreesCleaned(g.stdout, removed, kept, g.Dir)
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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/view"
)

// ralph loop --worktree [NAME]: the loop runs in a worktree and on a
// branch of its own (autopilot.LoopWorktreeIn), so that it can run beside
// another loop or the autopilot in the same repository.

// checkWorktreeFlag says what is wrong with --worktree among the flags.
func (c *loopCmd) checkWorktreeFlag() error {
	wt := c.Worktree
	switch {
	case !wt.Given:
		return nil
	case wt.Value != "":
		if err := autopilot.CheckLoopName(wt.Value); err != nil {
			return fmt.Errorf("--worktree: %w", err)
		}
	case c.Resume:
		return errors.New("--resume --worktree needs the name of the worktree whose run to resume: ralph loop --worktree NAME --resume (ralph worktrees lists them)")
	}
	return nil
}

// enterWorktree makes the loop's worktree when it is missing and moves the
// loop into it: g.Dir becomes the worktree. The files that -c, -P and -H
// name, and the config found here when no -c is given, are read from
// where the loop was started, as the user wrote them (an uncommitted
// ralph.yml too), not from the worktree's copy of HEAD: their paths are
// made absolute, so a resume reads them from there again. say tells the
// user where the loop runs.
func (c *loopCmd) enterWorktree(ctx context.Context, g *globals, say func(string)) error {
	here := g.Dir
	if err := c.readFilesFrom(here); err != nil {
		return err
	}
	cfg, _, err := loadConfigWith(here, c.Config, c.Hats, c.Set)
	switch {
	case errors.Is(err, config.ErrNotFound):
		if cfg, err = config.LoadOver(configOptions(c.Set)); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	root, err := autopilot.LoopRepo(ctx, here)
	if err != nil {
		return err
	}
	worktrees := cfg.Autopilot.WorktreesDir
	name := c.Worktree.Value
	if name == "" {
		name = autopilot.NewLoopName(ctx, root, worktrees, c.objectiveFor(here, cfg))
	}
	lw := autopilot.LoopWorktreeIn(root, worktrees, name)
	where := relativeTo(here, lw.Dir)
	if _, err := os.Stat(lw.Dir); err != nil && c.Resume {
		// A resume finds a run; it never makes a worktree to look in.
		return withHint(fmt.Errorf("there is no loop worktree %s (%s) to resume", name, where),
			"ralph worktrees lists the loops' worktrees; ralph loop --worktree "+name+" starts a new run in a new one")
	}
	made, base, err := autopilot.MakeLoopWorktree(ctx, root, worktrees, lw)
	if err != nil {
		return err
	}
	// ralph made the worktree: its git there never follows the .git file
	// the loop's agent can rewrite (see workspacegit.Pin).
	if c.pin, err = (workspacegit.Repo{Dir: root}).WorktreePin(ctx, lw.Dir); err != nil {
		return err
	}
	if made {
		say(fmt.Sprintf("made the worktree %s on branch %s from %s; the loop runs there (ralph worktrees lists it)", where, lw.Branch, view.ShortRev(base)))
	} else {
		say(fmt.Sprintf("the loop runs in the worktree %s on branch %s", where, lw.Branch))
	}
	g.Dir = lw.Dir
	return nil
}

// readFilesFrom makes the paths of -c, -P and -H (a file, not a preset)
// absolute against dir, and names the config found in dir when no -c is
// given.
func (c *loopCmd) readFilesFrom(dir string) error {
	for i, p := range c.Config {
		c.Config[i] = inWorkspace(dir, p)
	}
	if len(c.Config) == 0 && !c.Resume {
		found, err := config.Find(dir)
		switch {
		case err == nil:
			c.Config = []string{found}
		case !errors.Is(err, config.ErrNotFound):
			return err
		}
	}
	if c.PromptFile != "" {
		c.PromptFile = inWorkspace(dir, c.PromptFile)
	}
	if c.Hats != "" {
		if _, err := os.Stat(inWorkspace(dir, c.Hats)); err == nil {
			c.Hats = inWorkspace(dir, c.Hats)
		}
	}
	return nil
}

// objectiveFor is what a new worktree's name is made from: the objective,
// else the spec's file name; "" when there is neither.
func (c *loopCmd) objectiveFor(dir string, cfg *config.Config) string {
	if c.Resume {
		return ""
	}
	if objective, _, err := cfg.Objective(dir, c.Prompt, c.PromptFile); err == nil {
		return objective
	}
	if c.Spec != "" {
		return strings.TrimSuffix(filepath.Base(c.Spec), filepath.Ext(c.Spec))
	}
	return ""
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/completion"
)

type completeCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" placeholder:"SHELL" help:"bash, zsh or fish."`
}

func (completeCmd) Help() string {
	return `Prints the lines that make the shell complete ralph's command line:
commands, flags, and the values of flags that take a choice (presets,
backends, formats), files where a flag takes a file, hat ids for
ralph hats show, and the names of the loops' worktrees for ralph loop
--worktree. The shell then asks this ralph, by its full path, for
every completion, so they follow the installed version.

Examples:
  source <(ralph completion bash)      # in ~/.bashrc
  source <(ralph completion zsh)       # in ~/.zshrc, after compinit
  ralph completion fish | source       # in ~/.config/fish/config.fish`
}

func (c *completeCmd) Run(g *globals, kctx *kong.Context) error {
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the path of this ralph, for the shell to run: %w", err)
	}
	return completion.Script(g.stdout, c.Shell, kctx.Model.Name, bin)
}

// completionOptions complete what kong's model of the command line does
// not say: presets, backends, and the hat ids of the workspace.
var completionOptions = completion.Options{
	FlagValues:  map[string]func() []string{"preset": examples.Names, "hats": examples.Names, "backend": backends.Choices, "worktree": loopWorktreeNames},
	ValueOrFile: []string{"hats"},
	Predictors:  map[string]complete.Predictor{"hat": complete.PredictFunc(hatIDs)},
}

// loopWorktreeNames are the names of the loops' worktrees of the
// repository the line names with -C (else the current directory), for
// ralph loop --worktree NAME --resume; none when they cannot be read.
func loopWorktreeNames() []string {
	dir, err := filepath.Abs(cmp.Or(completion.LineFlag("-C", "--dir"), "."))
	if err != nil {
		return nil
	}
	ctx := context.Background()
	root, worktrees, err := loopWorktreesOf(ctx, dir, nil)
	if err != nil {
		return nil
	}
	list, err := autopilot.LoopWorktrees(ctx, root, worktrees, time.Now())
	if err != nil {
		return nil
	}
	names := make([]string, len(list))
	for i, st := range list {
		names[i] = st.Name
	}
	return names
}

// hatIDs are the ids of the hats of the workspace the line names with -C
// (else the current directory), the coordinator's last; none when its
// config does not load.
func hatIDs(complete.Args) []string {
	dir, err := filepath.Abs(cmp.Or(completion.LineFlag("-C", "--dir"), "."))
	if err != nil {
		return nil
	}
	cfg, path, err := loadConfigWith(dir, nil, "", nil)
	if err != nil {
		return nil
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return nil
	}
	var ids []string
	for _, h := range reg.Hats() {
		ids = append(ids, h.ID)
	}
	return append(ids, hats.CoordinatorID)
}

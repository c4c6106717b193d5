package main

import (
	"github.com/alecthomas/kong"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/examples"
	"github.com/ralph-loop/ralph/internal/completion"
)

type completeCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" placeholder:"SHELL" help:"bash, zsh or fish."`
}

func (completeCmd) Help() string {
	return `Prints a completion script for the shell: commands, flags, and the values
of flags that take a choice (presets, backends, formats), files where a
flag takes a file, and hat ids for ralph hats show.

Examples:
  source <(ralph completion bash)                 # in ~/.bashrc
  ralph completion zsh > "${fpath[1]}/_ralph"     # then restart zsh
  ralph completion fish > ~/.config/fish/completions/ralph.fish`
}

func (c *completeCmd) Run(g *globals, kctx *kong.Context) error {
	return completion.Write(g.stdout, c.Shell, kctx.Model.Node, completion.Options{
		FlagValues:  map[string]func() []string{"preset": examples.Names, "hats": examples.Names, "backend": backends.Choices},
		ValueOrFile: []string{"hats"},
	})
}

package main

import (
	"fmt"

	"github.com/ralph-loop/ralph/hats"
)

type validateCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge."`
}

func (validateCmd) Help() string {
	return `Loads a config the way ralph loop does and reports every problem it finds,
each with file:line and how to fix it. Exits 0 when the config is usable, 3
when it is not.

Examples:
  ralph validate
  ralph validate -c ralph.yml -c local.yml`
}

func (c *validateCmd) Run(g *globals) error {
	cfg, path, err := loadConfig(g.Dir, c.Config)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	reg, err := hats.NewRegistry(cfg.HatList(), hats.WithCompletionTopic(cfg.EventLoop.CompletionPromise))
	if err != nil {
		return withHint(err, "fix the hats: section of "+path)
	}
	if _, _, err := cfg.Objective(g.Dir, "", ""); err != nil {
		fmt.Fprintf(g.stderr, "ralph: warning: %v (pass -p or -P to ralph loop)\n", err)
	}
	fmt.Fprintf(g.stdout, "%s: ok (%d hats, backend %s, completion topic %s)\n",
		path, len(reg.Hats()), cfg.CLI.Backend, cfg.EventLoop.CompletionPromise)
	return nil
}

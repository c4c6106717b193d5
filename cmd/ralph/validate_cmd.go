package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hooks"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/plural"
)

type validateCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge."`
	Hats   string   `short:"H" placeholder:"FILE|NAME" help:"Hat collection laid over the config: a preset name (ralph init --list) or a file with hats: and optionally event_loop:."`
}

func (validateCmd) Help() string {
	return `Loads a config the way ralph loop does and reports every problem it finds,
each with file:line and how to fix it. Then it checks the hat topology, the
hand-offs from the starting event to the completion topic:

  errors (exit 3)   a hat no hand-off from the starting event reaches; no
                    path to the completion topic; a required event no hat
                    publishes; a gate naming an unknown criterion
  warnings          a published topic no hat triggers on; two hats whose
                    triggers overlap; a gate no published topic matches

A hand-off is a topic in a hat's publishes (or default_publishes) going to
the first hat that triggers on it. The coordinator, which may publish any
topic, counts only when it takes the starting event. ralph hats graph draws
the same hand-offs.

Exits 0 when the config is usable, 3 when it is not.

Examples:
  ralph validate
  ralph validate -c ralph.yml -c local.yml
  ralph validate -H tdd                  # ralph.yml with the tdd preset's hats`
}

func (c *validateCmd) Run(g *globals) error {
	cfg, path, err := loadConfigWith(g.Dir, c.Config, c.Hats)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	reg, err := cfg.Registry(path)
	if err != nil {
		return err
	}
	errs, warnings := cfg.TopologyProblems(reg, path)
	errs = append(errs, hooks.Problems(cfg, reg, g.Dir)...)
	errs = append(errs, cfg.CriteriaProblems(g.Dir)...)
	errs = append(errs, agentProblems(cfg, path)...)
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	for _, w := range costLimitWarnings(cfg) {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	if len(errs) > 0 {
		return &config.Error{Problems: errs}
	}
	if _, _, err := cfg.Objective(g.Dir, "", ""); err != nil && !cfg.ForAutopilot() {
		fmt.Fprintf(g.stderr, "ralph: warning: %v (pass -p or -P to ralph loop)\n", err)
	}
	fmt.Fprintf(g.stdout, "%s: ok (%s, backend %s, completion topic %s)\n",
		path, plural.Count(len(reg.Hats()), "hat", "hats"), cfg.CLI.Backend, cfg.EventLoop.CompletionPromise)
	return nil
}

// agentProblems are what ralph loop would refuse of the agent CLIs the
// config names, but for a CLI looked up on PATH that this machine lacks:
// the config may be meant for another, and `ralph doctor` says what is
// installed here. A cli.command path that runs nothing is the config's
// mistake wherever it runs.
func agentProblems(cfg *config.Config, path string) []config.Problem {
	_, err := newBackends(cfg, "", redactorOf(cfg), nil)
	if err == nil {
		return nil
	}
	p := config.Problem{File: path, Msg: err.Error(), Hint: hint.Of(err)}
	var setup *backends.SetupError
	if errors.As(err, &setup) && setup.Problem != "" {
		p.Msg = setup.Problem
	}
	var missing *backends.MissingBinaryError
	if errors.As(err, &missing) && !strings.ContainsAny(missing.Binary, `/\`) {
		return nil
	}
	return []config.Problem{p}
}

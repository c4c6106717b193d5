package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/hooks"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/plural"
)

type validateCmd struct {
	Config []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge."`
	Hats   string   `short:"H" placeholder:"FILE|NAME" help:"Hat collection laid over the config: a preset name (ralph init --list) or a file with hats: and optionally event_loop:."`
	Set    []string `placeholder:"KEY=VALUE" help:"Set a config key over the files, as ralph loop --set does. Repeatable."`
	JSON   bool     `name:"json" help:"Print one JSON object: ok, the file, hats, backend, completion_topic, problems (file, line, message, hint) and warnings; the exit status is the same."`
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

Exits 0 when the config is usable, 3 when it is not. With --json the problems
and warnings are in the JSON object on stdout instead of on stderr.

Examples:
  ralph validate
  ralph validate -c ralph.yml -c local.yml
  ralph validate -H tdd                  # ralph.yml with the tdd preset's hats
  ralph validate --json | jq '.problems[] | "\(.file):\(.line) \(.message)"'`
}

func (c *validateCmd) Run(g *globals) error {
	v := c.validate(g)
	if c.JSON {
		return v.writeJSON(g.stdout)
	}
	for _, w := range v.warnings {
		fmt.Fprintf(g.stderr, "ralph: warning: %s\n", w)
	}
	if v.err != nil {
		return v.err
	}
	fmt.Fprintf(g.stdout, "%s: ok (%s, backend %s, completion topic %s)\n",
		v.path, plural.Count(v.hats, "hat", "hats"), v.backend, v.completion)
	return nil
}

// validation is what validate found: the config's problems (err), the
// warnings, and what the config is when it is usable.
type validation struct {
	path, backend, completion string
	hats                      int
	warnings                  []string
	err                       error
}

func (c *validateCmd) validate(g *globals) validation {
	cfg, path, err := loadConfigWith(g.Dir, c.Config, c.Hats, c.Set)
	if err != nil {
		return validation{err: err}
	}
	v := validation{path: path, warnings: slices.Clone(cfg.Warnings)}
	reg, err := cfg.Registry(path)
	if err != nil {
		v.err = err
		return v
	}
	errs, warnings := cfg.TopologyProblems(reg, path)
	errs = append(errs, hooks.Problems(cfg, reg, g.Dir)...)
	errs = append(errs, cfg.CriteriaProblems(g.Dir)...)
	errs = append(errs, agentProblems(cfg, path)...)
	errs = append(errs, chainProblems(cfg, g.Dir)...)
	for _, w := range warnings {
		v.warnings = append(v.warnings, w.String())
	}
	v.warnings = append(v.warnings, costLimitWarnings(cfg)...)
	if len(errs) > 0 {
		v.err = &config.Error{Problems: errs}
		return v
	}
	if _, _, err := cfg.Objective(g.Dir, "", ""); err != nil && !cfg.ForAutopilot() {
		v.warnings = append(v.warnings, fmt.Sprintf("%v (pass -p or -P to ralph loop)", err))
	}
	v.hats, v.backend, v.completion = len(reg.Hats()), cfg.CLI.Backend, cfg.EventLoop.CompletionPromise
	return v
}

// validateJSON is what validate --json prints. Problems are validate's
// output, so unlike other commands' errors they are printed as JSON too,
// and the exit status says whether the config is usable (0 or 3).
type validateJSON struct {
	OK              bool          `json:"ok"`
	File            string        `json:"file,omitempty"`
	Hats            int           `json:"hats"`
	Backend         string        `json:"backend,omitempty"`
	CompletionTopic string        `json:"completion_topic,omitempty"`
	Problems        []problemJSON `json:"problems"`
	Warnings        []string      `json:"warnings"`
}

// problemJSON is a config.Problem as JSON.
type problemJSON struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (v validation) writeJSON(w io.Writer) error {
	out := validateJSON{OK: v.err == nil, File: v.path, Hats: v.hats, Backend: v.backend, CompletionTopic: v.completion,
		Problems: []problemJSON{}, Warnings: append([]string{}, v.warnings...)}
	if cerr, ok := errors.AsType[*config.Error](v.err); ok {
		for _, p := range cerr.Problems {
			out.Problems = append(out.Problems, problemJSON{File: p.File, Line: p.Line, Message: p.Msg, Hint: p.Hint})
		}
	} else if v.err != nil {
		out.Problems = append(out.Problems, problemJSON{Message: v.err.Error(), Hint: hint.Of(v.err)})
	}
	if err := writeJSON(w, out); err != nil {
		return err
	}
	if v.err != nil {
		return exitError{code: exitcode.Fatal}
	}
	return nil
}

// agentProblems are what ralph loop would refuse of the agent CLIs the
// config names, but for a CLI looked up on PATH that this machine lacks:
// the config may be meant for another, and `ralph doctor` says what is
// installed here. A cli.command path that runs nothing is the config's
// mistake wherever it runs.
func agentProblems(cfg *config.Config, path string) []config.Problem {
	_, err := newBackends(cfg, redactorOf(cfg), nil)
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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/view"
)

type doctorCmd struct {
	// --backend judges one backend without reading any config, so the two
	// cannot go together.
	Config  []string `short:"c" placeholder:"FILE" xor:"judge" help:"Config file (default ./ralph.yml). Repeat to merge."`
	Backend string   `placeholder:"NAME" xor:"judge" help:"Judge this backend instead of the configured one."`
	JSON    bool     `name:"json" help:"Print one JSON object."`
	Fix     bool     `help:"Also fix what is safe to fix in ralph's own state: stale locks, leftover temporary files, worktrees git would prune."`
}

func (doctorCmd) Help() string {
	return `Lists every agent backend ralph knows: whether its binary is installed (and
where), its version (the first line of <binary> --version, 10 s at most), and
the auth settings it would likely use — environment variables and login files
are named, their contents never shown.

Then it judges the backend the run would use: --backend, else cli.backend (and
each hat's backend) of -c FILE or ./ralph.yml, else claude; for a backend that
heads a fallback chain (cli.fallback), each backend of the chain in order:
installed or not, credentials found or not. Exit status: 0 when it can run (a
chain: when one of its backends can), 1 when its binary is missing, 3 for a
bad config or an unknown backend name.

Last it checks ralph's own state in this workspace and its repository, and
says how to fix what it finds: a lock file that names a ralph that was killed,
a run cut off that nothing runs, an agent's process group (a wave worker's
too) a killed ralph left running, the temporary file of a write that was cut
off, the autopilot's task worktrees and ralph/ branches whose task it has no
use for, worktrees git would prune, the worktrees of ralph loop --worktree
whose run ended. --fix does the
fixes that lose nothing (empties a stale lock, removes leftover temporary files,
prunes what git would prune) and says what it did and what it left for a
person. What it finds there does not change the exit status.

Examples:
  ralph doctor
  ralph doctor -c ralph.yml
  ralph doctor --backend codex
  ralph doctor --fix
  ralph doctor --json | jq '.backends[] | select(.found) | .name'
  ralph doctor --json | jq '.state.findings[] | select(.safe | not) | .fix'`
}

func (c *doctorCmd) Run(ctx context.Context, g *globals) error {
	uses, chains, cfgErr := c.uses(g)
	if cfgErr != nil && len(uses) == 0 && c.Backend != "" {
		return cfgErr // an unknown --backend: nothing to judge
	}
	rep := view.DoctorReport{Backends: backends.DiagnoseAll(uses), Ready: cfgErr == nil, Sandbox: sandboxSupport(), Chains: chains}
	for _, u := range uses {
		cb := backends.Judge(u)
		rep.Ready = rep.Ready && (cb.Ready || chainRescues(chains, u.Where))
		rep.Configured = append(rep.Configured, cb)
	}
	state := checkState(ctx, g.Dir, c.Config, c.Fix)
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doctorJSON{rep, state}); err != nil {
			return err
		}
	} else {
		view.WriteDoctor(g.stdout, rep)
		view.WriteStateReport(g.stdout, state)
	}
	switch {
	case cfgErr != nil:
		return cfgErr
	case !rep.Ready:
		return exitError{1}
	}
	return nil
}

// uses are the backends the run would use: --backend; else cli.backend
// and each hat's backend of the config, with their fallback chains; else
// claude, ralph's default, when there is no config at all.
func (c *doctorCmd) uses(g *globals) ([]backends.Use, []view.DoctorChain, error) {
	if c.Backend != "" {
		if err := backends.CheckName(c.Backend); err != nil {
			return nil, nil, withHint(err, "pass one of the known backends to --backend")
		}
		return []backends.Use{{Where: "--backend", Opts: backends.Options{Name: c.Backend}}}, nil, nil
	}
	cfg, path, err := config.LoadIn(g.Dir, c.Config, nil, configOptions(nil))
	if errors.Is(err, config.ErrNotFound) && len(c.Config) == 0 {
		return []backends.Use{{Where: "default: no ralph.yml here", Opts: backends.Options{Name: config.Default().CLI.Backend}}}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	uses := []backends.Use{{Where: "cli.backend in " + path, Opts: backendOptions(cfg.CLI, 0)}}
	for _, h := range cfg.Hats {
		if h.Backend != nil {
			uses = append(uses, backends.Use{Where: fmt.Sprintf("hats.%s.backend in %s", h.ID, path), Opts: backendOptions(*h.Backend, 0)})
		}
	}
	return uses, doctorChains(cfg, path), nil
}

// doctorJSON is `ralph doctor --json`: the backends' report, and what was
// found in ralph's own state under "state".
type doctorJSON struct {
	view.DoctorReport
	State view.StateReport `json:"state"`
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
)

type doctorCmd struct {
	// --backend judges one backend without reading any config, so the two
	// cannot go together.
	Config  []string `short:"c" placeholder:"FILE" xor:"judge" help:"Config file (default ./ralph.yml). Repeat to merge."`
	Backend string   `placeholder:"NAME" xor:"judge" help:"Judge this backend instead of the configured one."`
	JSON    bool     `name:"json" help:"Print one JSON object."`
}

func (doctorCmd) Help() string {
	return `Lists every agent backend ralph knows: whether its binary is installed (and
where), its version (the first line of <binary> --version, 10 s at most), and
the auth settings it would likely use — environment variables and login files
are named, their contents never shown.

Then it judges the backend the run would use: --backend, else cli.backend (and
each hat's backend) of -c FILE or ./ralph.yml, else claude. Exit status: 0 when
it can run, 1 when its binary is missing, 3 for a bad config or an unknown
backend name.

Examples:
  ralph doctor
  ralph doctor -c ralph.yml
  ralph doctor --backend codex
  ralph doctor --json | jq '.backends[] | select(.found) | .name'`
}

// doctorReport is what ralph doctor prints (as JSON with --json).
type doctorReport struct {
	Backends   []backends.Diagnosis `json:"backends"`
	Configured []configuredBackend  `json:"configured"`
	Ready      bool                 `json:"ready"`
}

// configuredBackend is one backend the run would use, and whether it can.
type configuredBackend struct {
	Backend string `json:"backend"`
	Where   string `json:"where"` // e.g. "cli.backend in /x/ralph.yml"
	// Picked is the CLI backend auto chose.
	Picked  string `json:"picked,omitempty"`
	Ready   bool   `json:"ready"`
	Problem string `json:"problem,omitempty"`
}

// backendUse is a backend the run would use, with its configured options.
type backendUse struct {
	where string
	opts  backends.Options
}

func (c *doctorCmd) Run(g *globals) error {
	uses, cfgErr := c.uses(g)
	if cfgErr != nil && len(uses) == 0 && c.Backend != "" {
		return cfgErr // an unknown --backend: nothing to judge
	}
	rep := doctorReport{Backends: diagnoseAll(uses), Ready: cfgErr == nil}
	for _, u := range uses {
		cb := judge(u)
		rep.Ready = rep.Ready && cb.Ready
		rep.Configured = append(rep.Configured, cb)
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		renderDoctor(g.stdout, rep)
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
// and each hat's backend of the config; else claude, ralph's default, when
// there is no config at all.
func (c *doctorCmd) uses(g *globals) ([]backendUse, error) {
	if c.Backend != "" {
		if err := knownBackend(c.Backend); err != nil {
			return nil, withHint(err, "pass one of the known backends to --backend")
		}
		return []backendUse{{where: "--backend", opts: backends.Options{Name: c.Backend}}}, nil
	}
	cfg, path, err := config.LoadIn(g.Dir, c.Config, nil)
	if errors.Is(err, config.ErrNotFound) && len(c.Config) == 0 {
		return []backendUse{{where: "default: no ralph.yml here", opts: backends.Options{Name: config.Default().CLI.Backend}}}, nil
	}
	if err != nil {
		return nil, err
	}
	uses := []backendUse{{where: "cli.backend in " + path, opts: backendOptions(cfg.CLI, 0)}}
	for _, h := range cfg.Hats {
		if h.Backend != nil {
			uses = append(uses, backendUse{where: fmt.Sprintf("hats.%s.backend in %s", h.ID, path), opts: backendOptions(*h.Backend, 0)})
		}
	}
	return uses, nil
}

// knownBackend reports an unknown backend name as an
// *backends.UnknownBackendError; auto and custom are names too.
func knownBackend(name string) error {
	switch canonicalBackend(name) {
	case "auto", "command":
		return nil
	}
	_, err := backends.Diagnose(name, backends.DiagnoseOptions{SkipVersion: true})
	return err
}

// diagnoseAll looks at every known backend at once (each version probe
// starts a program, some take seconds). A backend the run uses is looked
// at with its configured binary and environment.
func diagnoseAll(uses []backendUse) []backends.Diagnosis {
	names := backends.Names()
	out := make([]backends.Diagnosis, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		opts := backends.DiagnoseOptions{}
		for _, u := range uses {
			if canonicalBackend(u.opts.Name) == name {
				opts.Command, opts.Env = u.opts.Command, u.opts.Env
				break
			}
		}
		wg.Go(func() {
			d, err := backends.Diagnose(name, opts)
			if err != nil { // cannot happen: the name comes from Names
				d = backends.Diagnosis{Name: name, Problem: err.Error()}
			}
			out[i] = d
		})
	}
	wg.Wait()
	return out
}

func canonicalBackend(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "custom" {
		return "command"
	}
	return n
}

// judge says whether one configured backend can run: its binary must be
// there (for auto: one of the CLIs must be installed).
func judge(u backendUse) configuredBackend {
	cb := configuredBackend{Backend: u.opts.Name, Where: u.where}
	b, err := backends.New(u.opts)
	if err != nil {
		cb.Problem = err.Error()
		return cb
	}
	if canonicalBackend(u.opts.Name) == "auto" {
		cb.Picked = b.Name()
	}
	if err := b.Check(); err != nil {
		cb.Problem = err.Error()
		return cb
	}
	cb.Ready = true
	return cb
}

func renderDoctor(w io.Writer, rep doctorReport) {
	for _, d := range rep.Backends {
		renderDiagnosis(w, d)
	}
	fmt.Fprintln(w)
	for _, cb := range rep.Configured {
		name := cb.Backend
		if cb.Picked != "" {
			name += " → " + cb.Picked
		}
		if cb.Ready {
			fmt.Fprintf(w, "ready: %s (%s)\n", name, cb.Where)
		} else {
			fmt.Fprintf(w, "cannot run: %s (%s): %s\n", name, cb.Where, cb.Problem)
		}
	}
}

func renderDiagnosis(w io.Writer, d backends.Diagnosis) {
	const indent = "            "
	switch {
	case d.Found:
		fmt.Fprintf(w, "%-10s  found    %s\n", d.Name, d.Path)
		// No version and no reason: none was asked for (the command
		// backend's program need not know --version).
		switch {
		case d.Version != "":
			fmt.Fprintf(w, "%sversion  %s\n", indent, d.Version)
		case d.VersionError != "":
			fmt.Fprintf(w, "%sversion  unknown: %s\n", indent, d.VersionError)
		}
	case d.Binary == "":
		fmt.Fprintf(w, "%-10s  —        runs the program named in cli.command (none set)\n", d.Name)
		return
	default:
		fmt.Fprintf(w, "%-10s  missing  %s\n", d.Name, d.Problem)
	}
	switch {
	case len(d.Auth) == 0 && d.AuthHint == "":
		return // ralph does not know where this program keeps credentials
	case len(d.Auth) == 0:
		fmt.Fprintf(w, "%sauth     none found; %s\n", indent, d.AuthHint)
		return
	}
	for i, a := range d.Auth {
		label := "auth    "
		if i > 0 {
			label = "        "
		}
		fmt.Fprintf(w, "%s%s %s %s (%s)\n", indent, label, a.Kind, a.Name, a.Detail)
	}
}

package backends

import (
	"strings"
	"sync"
)

// Use is a backend a run would use, with its configured options and where
// the configuration said so ("cli.backend in /x/ralph.yml").
type Use struct {
	Where string
	Opts  Options
}

// Readiness is one backend a run would use, and whether it can.
type Readiness struct {
	Backend string `json:"backend"`
	Where   string `json:"where"` // e.g. "cli.backend in /x/ralph.yml"
	// Picked is the CLI backend auto chose.
	Picked  string `json:"picked,omitempty"`
	Ready   bool   `json:"ready"`
	Problem string `json:"problem,omitempty"`
}

// DiagnoseAll looks at every known backend at once (each version probe
// starts a program, some take seconds). A backend the run uses is looked
// at with its configured binary and environment.
func DiagnoseAll(uses []Use) []Diagnosis {
	names := Names()
	out := make([]Diagnosis, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		opts := DiagnoseOptions{}
		for _, u := range uses {
			if Canonical(u.Opts.Name) == name {
				opts.Command, opts.Env = u.Opts.Command, u.Opts.Env
				break
			}
		}
		wg.Go(func() {
			d, err := Diagnose(name, opts)
			if err != nil { // cannot happen: the name comes from Names
				d = Diagnosis{Name: name, Problem: err.Error()}
			}
			out[i] = d
		})
	}
	wg.Wait()
	return out
}

// Canonical is ralph's name for a backend as a user may write it: lower
// case, and command for its other name, custom.
func Canonical(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "custom" {
		return "command"
	}
	return n
}

// CheckName reports an unknown backend name as an *UnknownBackendError;
// auto and command (custom) are names too.
func CheckName(name string) error {
	switch Canonical(name) {
	case "auto", "command":
		return nil
	}
	if _, ok := clis[Canonical(name)]; !ok {
		return unknownBackend(name)
	}
	return nil
}

// Judge says whether one configured backend can run: its binary must be
// there (for auto: one of the CLIs must be installed).
func Judge(u Use) Readiness {
	cb := Readiness{Backend: u.Opts.Name, Where: u.Where}
	b, err := New(u.Opts)
	if err != nil {
		cb.Problem = err.Error()
		return cb
	}
	if Canonical(u.Opts.Name) == "auto" {
		cb.Picked = b.Name()
	}
	if err := b.Check(); err != nil {
		cb.Problem = err.Error()
		return cb
	}
	cb.Ready = true
	return cb
}

package main

import (
	"fmt"

	"github.com/ralph-loop/ralph/backends"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/view"
)

// doctorChains judges each fallback chain of cfg (cli.fallback, a hat's
// backend fallback:): for each backend, in the order a run tries them,
// whether it is installed and has credentials. A chain's head is named
// where as doctor's configured list names it, so that a missing head with
// an installed fallback is not "cannot run".
func doctorChains(cfg *config.Config, path string) []view.DoctorChain {
	var out []view.DoctorChain
	add := func(where string, head config.CLI) {
		if len(head.Fallback) == 0 {
			return
		}
		c := view.DoctorChain{Where: where}
		for i, b := range append([]config.CLI{head}, head.Fallback...) {
			at := where
			if i > 0 {
				at = fmt.Sprintf("%s fallback[%d]", where, i-1)
			}
			m := backends.JudgeMember(backends.Use{Where: at, Opts: backendOptions(b, 0)})
			c.Members = append(c.Members, m)
			c.Ready = c.Ready || m.Ready
		}
		out = append(out, c)
	}
	add("cli.backend in "+path, cfg.CLI)
	for _, h := range cfg.Hats {
		if h.Backend != nil {
			add(fmt.Sprintf("hats.%s.backend in %s", h.ID, path), *h.Backend)
		}
	}
	return out
}

// chainRescues reports whether the backend configured at where heads a
// chain of which some backend can run.
func chainRescues(chains []view.DoctorChain, where string) bool {
	for _, c := range chains {
		if c.Where == where && c.Ready {
			return true
		}
	}
	return false
}

package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ralph-loop/ralph/backends"
)

// DoctorChain is one configured backend chain (cli: with cli.fallback, a
// hat's backend with its fallback:) as ralph doctor judges it: each
// backend in the order a run tries them.
type DoctorChain struct {
	// Where is the chain's head as the configured list names it ("cli.backend in /x/ralph.yml").
	Where   string                 `json:"where"`
	Members []backends.ChainMember `json:"backends"`
	// Ready says some backend of the chain can run: a run goes on with it.
	Ready bool `json:"ready"`
}

// writeChains says, for each chain, whether each of its backends is
// installed and has credentials.
func writeChains(w io.Writer, chains []DoctorChain) {
	for _, c := range chains {
		names := make([]string, len(c.Members))
		for i, m := range c.Members {
			names[i] = m.Backend
		}
		fmt.Fprintf(w, "\nchain:      %s (%s)\n", strings.Join(names, " → "), c.Where)
		for _, m := range c.Members {
			fmt.Fprintf(w, "            %-9s %s; %s\n", m.Backend, memberInstalled(m), memberCredentials(m))
		}
		if !c.Ready {
			fmt.Fprintln(w, "            none of them can run")
		}
	}
}

func memberInstalled(m backends.ChainMember) string {
	switch {
	case !m.Ready:
		return "not installed: " + m.Problem
	case m.Picked != "":
		return "installed (auto picks " + m.Picked + ")"
	}
	return "installed"
}

func memberCredentials(m backends.ChainMember) string {
	switch m.Credentials {
	case backends.CredentialsFound:
		names := make([]string, len(m.Auth))
		for i, a := range m.Auth {
			names[i] = a.Name
		}
		return "credentials: " + strings.Join(names, ", ")
	case backends.CredentialsNone:
		return "no credentials found: " + m.AuthHint
	}
	return "credentials: unknown (ralph does not know where this program keeps them)"
}

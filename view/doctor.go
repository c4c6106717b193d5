package view

import (
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/backends"
)

// DoctorReport is what ralph doctor prints (as JSON with --json).
type DoctorReport struct {
	Backends   []backends.Diagnosis `json:"backends"`
	Configured []backends.Readiness `json:"configured"`
	// Chains are the configured fallback chains, each backend judged.
	Chains  []DoctorChain  `json:"chains,omitempty"`
	Ready   bool           `json:"ready"`
	Sandbox SandboxSupport `json:"sandbox"`
}

// SandboxSupport is what this machine offers to confine agents with.
type SandboxSupport struct {
	// Mechanisms says, one line each, what is available and what is not
	// (and how to get it).
	Mechanisms []string `json:"mechanisms"`
	// Auto is what sandbox.mode auto picks here: landlock, bwrap,
	// seatbelt, or off.
	Auto string `json:"auto"`
	// Warning is why auto confines nothing here, if it does not.
	Warning string `json:"warning,omitempty"`
}

// WriteDoctor prints a doctor report for people: each backend found or
// missing, then whether each configured one can run.
func WriteDoctor(w io.Writer, rep DoctorReport) {
	for _, d := range rep.Backends {
		writeDiagnosis(w, d)
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
	writeChains(w, rep.Chains)
	writeSandboxSupport(w, rep.Sandbox)
}

// writeSandboxSupport says how agents can be confined here: on by default
// for the autopilot's slots and workers, off for ralph loop unless
// configured.
func writeSandboxSupport(w io.Writer, s SandboxSupport) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "sandbox:    mode auto picks %s here (the default for autopilot slots and workers; ralph loop: set sandbox.mode)\n", s.Auto)
	for _, m := range s.Mechanisms {
		fmt.Fprintf(w, "            %s\n", m)
	}
	if s.Warning != "" {
		fmt.Fprintf(w, "            %s\n", s.Warning)
	}
}

func writeDiagnosis(w io.Writer, d backends.Diagnosis) {
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

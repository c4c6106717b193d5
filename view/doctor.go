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
	Ready      bool                 `json:"ready"`
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

// Package fileholders finds the processes that have a given file open.
//
// ralph uses it to name the process that really holds a lock file when the
// process recorded in that file is gone: a lock taken with flock belongs to
// an open file description, and any process holding a copy of that
// descriptor (a child forked a moment before its parent died, still on its
// way to exec) holds the lock with it. Linux answers from /proc/<pid>/fd
// and fdinfo; macOS and the BSDs through lsof, when it is installed (macOS
// has it). Elsewhere, or without lsof, [Find] reports
// errors.ErrUnsupported, and [Locks], which must never be wrong about a
// held lock, answers only on Linux.
//
// The package is a leaf helper that imports nothing of ralph's.
package fileholders

import (
	"fmt"
	"strings"
)

// Process is one process that has the file open.
type Process struct {
	PID int
	// Command is the process's command line, or its name when the command
	// line cannot be read; "" when neither can.
	Command string
	// Locks says a lock (flock or fcntl) is held through one of its
	// descriptors of the file: it is a holder of the lock, not just a
	// reader of the file.
	Locks bool
}

// maxCommand bounds a command line in a message.
const maxCommand = 120

// truncateCommand bounds a command line in a message.
func truncateCommand(s string) string {
	if len(s) > maxCommand {
		return s[:maxCommand] + "…"
	}
	return s
}

// Lockers returns the processes of procs that hold a lock on the file.
func Lockers(procs []Process) []Process {
	var out []Process
	for _, p := range procs {
		if p.Locks {
			out = append(out, p)
		}
	}
	return out
}

func (p Process) String() string {
	if p.Command == "" {
		return fmt.Sprintf("pid %d", p.PID)
	}
	return fmt.Sprintf("pid %d (%s)", p.PID, p.Command)
}

// Describe lists processes for a message: "pid 1 (a), pid 2 (b)".
func Describe(procs []Process) string {
	parts := make([]string, len(procs))
	for i, p := range procs {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

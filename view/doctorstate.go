package view

import (
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/internal/plural"
)

// The kinds of what `ralph doctor` finds in ralph's own state.
const (
	FindingStaleLock       = "stale_lock"        // a lock file naming a holder that is gone
	FindingUnfinishedRun   = "unfinished_run"    // the current run was cut off and nothing runs it
	FindingAgentLeft       = "agent_left"        // an agent's process group a killed ralph left running
	FindingTempFile        = "temp_file"         // a cut-off atomic write's temporary file
	FindingPrunable        = "prunable_worktree" // a worktree git would prune: its directory is gone
	FindingOrphanWorktree  = "orphan_worktree"   // a task's worktree whose task the autopilot has no use for
	FindingOrphanBranch    = "orphan_branch"     // a task's ralph/ branch without a worktree or a task
	FindingLoopWorktreeEnd = "finished_loop_worktree"
	FindingSpareWorktree   = "spare_worktree" // a spare a killed autopilot run left, with no autopilot running
)

// StateFinding is one thing `ralph doctor` found in ralph's own state (its
// files, its processes, its worktrees and branches), and how to fix it.
type StateFinding struct {
	Kind string `json:"kind"`
	// What is what was found, for people.
	What string `json:"what"`
	Path string `json:"path,omitempty"`
	// Fix is how to fix it: what `ralph doctor --fix` does, for a Safe
	// one; the command a person decides to type, for the others.
	Fix string `json:"fix"`
	// Safe says `ralph doctor --fix` fixes it: nothing of anyone's is
	// lost by the fix.
	Safe     bool   `json:"safe"`
	Fixed    bool   `json:"fixed,omitempty"`
	FixError string `json:"fix_error,omitempty"`
}

// StateReport is what `ralph doctor` found in ralph's own state.
type StateReport struct {
	// Fixing says --fix was given.
	Fixing   bool           `json:"fixing"`
	Findings []StateFinding `json:"findings"`
	// Skipped are the checks that could not run, each with why.
	Skipped []string `json:"skipped,omitempty"`
}

// WriteStateReport renders the state part of `ralph doctor`: each finding,
// what was done about it with --fix, and what is left for a person.
func WriteStateReport(w io.Writer, rep StateReport) {
	fmt.Fprintln(w, "\nralph's own state:")
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "  nothing left behind: no stale lock, orphaned agent, leftover file or worktree")
	}
	var fixed, left, safe int
	for _, f := range rep.Findings {
		switch {
		case f.Fixed:
			fixed++
			fmt.Fprintf(w, "  fixed: %s\n    %s\n", f.What, f.Fix)
		case f.FixError != "":
			left++
			fmt.Fprintf(w, "  ! %s\n    could not fix it: %s\n", f.What, f.FixError)
		default:
			left++
			if f.Safe {
				safe++
			}
			fmt.Fprintf(w, "  ! %s\n    fix: %s\n", f.What, f.Fix)
		}
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "  (not checked: %s)\n", s)
	}
	switch {
	case rep.Fixing && len(rep.Findings) > 0:
		fmt.Fprintf(w, "  %s fixed; %s left for a person\n", plural.Count(fixed, "problem", "problems"), plural.Count(left, "problem", "problems"))
	case safe > 0:
		fmt.Fprintf(w, "  `ralph doctor --fix` fixes %s of these; the others are for a person\n", plural.Count(safe, "problem", "problems"))
	}
}

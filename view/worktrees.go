package view

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/plural"
)

// WriteLoopWorktrees renders `ralph worktrees`: a line for each loop's
// worktree, its path relative to dir, where the command runs.
func WriteLoopWorktrees(w io.Writer, list []autopilot.LoopWorktreeStatus, dir string) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no loop worktrees here; ralph loop --worktree makes one")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLOOP\tBRANCH\tCOMMITS\tPATH")
	for _, st := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Name, loopWord(st), st.Branch, commitsWord(st), shownPath(dir, st.Dir))
	}
	_ = tw.Flush()
}

// WriteLoopWorktreesCleaned renders what `ralph worktrees clean` removed
// and what it kept, and why.
func WriteLoopWorktreesCleaned(w io.Writer, removed []autopilot.LoopWorktreeStatus, kept []autopilot.KeptLoopWorktree, dir string) {
	for _, st := range removed {
		fmt.Fprintf(w, "removed %s (%s, branch %s)\n", st.Name, shownPath(dir, st.Dir), st.Branch)
	}
	for _, k := range kept {
		fmt.Fprintf(w, "kept %s: %s\n", k.Name, k.Why)
	}
	if len(removed)+len(kept) == 0 {
		fmt.Fprintln(w, "no loop worktrees here; nothing to clean")
		return
	}
	fmt.Fprintf(w, "%s removed, %d kept\n", plural.Count(len(removed), "worktree", "worktrees"), len(kept))
}

// loopWord says how a worktree's loop is.
func loopWord(st autopilot.LoopWorktreeStatus) string {
	switch {
	case st.Running:
		return fmt.Sprintf("running (pid %d)", st.PID)
	case st.NoWorktree:
		return "no worktree"
	case st.Unfinished && st.Ended != nil:
		return fmt.Sprintf("unfinished (%s)", st.Ended.Reason)
	case st.Unfinished:
		return "unfinished"
	case st.Ended != nil:
		return fmt.Sprintf("%s (exit %d)", st.Ended.Reason, st.Ended.ExitCode)
	}
	return "no run yet"
}

// commitsWord says how the worktree's branch is against what it was made
// from, and what is uncommitted in it.
func commitsWord(st autopilot.LoopWorktreeStatus) string {
	var s string
	switch {
	case st.NoBranch:
		s = "no branch"
	case st.Ahead == nil && st.Base == "":
		s = "base unknown"
	case st.Ahead == nil:
		s = ShortRev(st.Base) + " is gone"
	case *st.Ahead == 0:
		s = "merged into " + ShortRev(st.Base)
	default:
		s = fmt.Sprintf("%s not in %s", plural.Count(*st.Ahead, "commit", "commits"), ShortRev(st.Base))
	}
	if st.Uncommitted > 0 {
		s += fmt.Sprintf(", %d uncommitted", st.Uncommitted)
	}
	return s
}

// ShortRev is a commit's hash shortened (a loop's worktree made from a
// detached HEAD records its commit), or a branch's name as it is.
func ShortRev(rev string) string {
	if len(rev) == 40 && strings.Trim(rev, "0123456789abcdef") == "" {
		return shortHash(rev)
	}
	return rev
}

// shownPath is path relative to dir when it is inside it, else as it is.
func shownPath(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

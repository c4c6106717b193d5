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

// WriteWorktrees renders `ralph worktree list`: a line for each worktree
// ralph made, a loop's or a task's, its path relative to dir.
func WriteWorktrees(w io.Writer, list []autopilot.WorktreeStatus, dir string) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no worktrees of ralph's here; ralph loop --worktree and ralph autopilot make them")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tLOOP\tBRANCH\tNOT MERGED\tPATH")
	for _, st := range list {
		if st.Kind == autopilot.WorktreeSpare {
			// Reset to the base, detached: no loop, branch or work of its own.
			fmt.Fprintf(tw, "%s\t%s\t-\tdetached\t-\t%s\n", st.Kind, st.Name, shownPath(dir, st.Dir))
			continue
		}
		loop := loopWord(st.LoopWorktreeStatus)
		switch {
		case st.InProgress && !st.Running:
			loop += ", task in progress"
		case st.Failed:
			loop += ", task failed"
		}
		path := "-"
		if st.Dir != "" {
			path = shownPath(dir, st.Dir)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.Kind, st.Name, loop, st.Branch, commitsWord(st.LoopWorktreeStatus), path)
	}
	_ = tw.Flush()
}

// WriteWorktreesCleaned renders what `ralph worktree clean` removed and
// what it kept, and why.
func WriteWorktreesCleaned(w io.Writer, removed []autopilot.WorktreeStatus, kept []autopilot.KeptWorktree, dir string) {
	for _, st := range removed {
		path := "no worktree"
		if !st.NoWorktree {
			path = shownPath(dir, st.Dir)
		}
		if st.Kind == autopilot.WorktreeSpare {
			fmt.Fprintf(w, "removed %s %s (%s, a killed autopilot run's, reset to its base)\n", st.Kind, st.Name, path)
			continue
		}
		fmt.Fprintf(w, "removed %s %s (%s, branch %s)\n", st.Kind, st.Name, path, st.Branch)
	}
	for _, k := range kept {
		fmt.Fprintf(w, "kept %s %s: %s\n", k.Kind, k.Name, k.Why)
	}
	if len(removed)+len(kept) == 0 {
		fmt.Fprintln(w, "no worktrees of ralph's here; nothing to clean")
		return
	}
	fmt.Fprintf(w, "%s removed, %d kept\n", plural.Count(len(removed), "worktree", "worktrees"), len(kept))
}

// WriteWorktreeDiff renders `ralph worktree diff`: the branch's commits
// that its base does not have and their patch, then what is uncommitted.
func WriteWorktreeDiff(w io.Writer, d autopilot.WorktreeDiff) {
	switch {
	case d.Base == "":
		fmt.Fprintf(w, "# %s %s: what it was made from is not known, so its commits cannot be told from its base's\n", d.Kind, d.Name)
	case len(d.Commits) == 0:
		fmt.Fprintf(w, "# %s %s: every commit of %s is in %s\n", d.Kind, d.Name, d.Branch, ShortRev(d.Base))
	default:
		fmt.Fprintf(w, "# %s %s: %s on %s not in %s\n", d.Kind, d.Name, plural.Count(len(d.Commits), "commit", "commits"), d.Branch, ShortRev(d.Base))
		for _, c := range d.Commits {
			fmt.Fprintf(w, "#   %s %s\n", shortHash(c.Hash), Sanitize(c.Subject))
		}
		fmt.Fprint(w, d.Patch)
	}
	if d.Uncommitted == "" && len(d.Untracked) == 0 {
		fmt.Fprintln(w, "# nothing uncommitted")
		return
	}
	fmt.Fprintln(w, "# uncommitted in its worktree:")
	fmt.Fprint(w, d.Uncommitted)
	for _, path := range d.Untracked {
		fmt.Fprintf(w, "# untracked: %s\n", path)
	}
}

package view

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// PrintRuns writes the runs of a workspace, as `ralph events --runs` lists
// them: a table, or one JSON object a line.
func PrintRuns(w io.Writer, runs []runfiles.RunListing, asJSON bool, loc *time.Location) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range runs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs here yet; start one with `ralph loop`")
		return err
	}
	const format = "%-1s %-22s  %-19s  %-24s  %4s  %9s  %s\n"
	fmt.Fprintf(w, format, "", "RUN", "STARTED", "ENDED", "ITER", "COST", "LOG")
	for _, r := range runs {
		mark, started, ended, iter, cost := "", "-", r.Ended, "-", "-"
		if r.Current {
			mark = "*"
		}
		if !r.Started.IsZero() {
			started = r.Started.In(loc).Format("2006-01-02 15:04:05")
		}
		if r.ExitCode != nil {
			ended = fmt.Sprintf("%s (exit %d)", r.Ended, *r.ExitCode)
			iter, cost = fmt.Sprint(r.Iterations), CostText(r.Cost())
		}
		if _, err := fmt.Fprintf(w, format, mark, r.RunID, started, ended, iter, cost, r.Log); err != nil {
			return err
		}
	}
	return nil
}

// WriteRunsOnDisk renders `ralph runs`: a line for each run, oldest first,
// with how it ended, how long it has been idle and what it keeps on disk.
func WriteRunsOnDisk(w io.Writer, runs []runfiles.RunOnDisk, now time.Time) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs here yet; start one with `ralph loop`")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The chain column only where a chain ran: the others read as before.
	chains := slices.ContainsFunc(runs, func(r runfiles.RunOnDisk) bool { return r.Chain != "" })
	if chains {
		fmt.Fprintln(tw, "\tRUN\tCHAIN\tENDED\tAGE\tSIZE\tOBJECTIVE")
	} else {
		fmt.Fprintln(tw, "\tRUN\tENDED\tAGE\tSIZE\tOBJECTIVE")
	}
	var total int64
	for _, r := range runs {
		mark, ended := "", r.Ended
		if r.Current {
			mark = "*"
		}
		if r.ExitCode != nil {
			ended = fmt.Sprintf("%s (exit %d)", r.Ended, *r.ExitCode)
		}
		total += r.Bytes
		id := Sanitize(r.RunID)
		if chains {
			id += "\t" + ChainStepText(r.RunListing)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", mark, id, ended, AgeText(r.Age(now)), SizeText(r.Bytes), Sanitize(r.Objective))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s, %s on disk; * is the current run\n", plural.Count(len(runs), "run", "runs"), SizeText(total))
	return err
}

// ChainStepText is the chain and step whose loop r was, "chain ID step
// N", or "-" for a run of the workspace's own loop.
func ChainStepText(r runfiles.RunListing) string {
	if r.Chain == "" {
		return "-"
	}
	return fmt.Sprintf("%s step %d", r.Chain, r.Step)
}

// WriteRunsCleaned renders what `ralph runs clean` removed (or, on a dry
// run, would remove) and the old runs it kept, and why.
func WriteRunsCleaned(w io.Writer, done runfiles.RunsCleaned) error {
	verb := "removed"
	if done.DryRun {
		verb = "would remove"
	}
	for _, r := range done.Removed {
		fmt.Fprintf(w, "%s %s (%s, %s)\n", verb, r.RunID, r.Ended, SizeText(r.Bytes))
	}
	for _, k := range done.Kept {
		fmt.Fprintf(w, "kept %s: %s\n", k.RunID, k.Why)
	}
	_, err := fmt.Fprintf(w, "%s %s idle for more than %s, %s freed\n", verb,
		plural.Count(len(done.Removed), "run", "runs"), done.MaxAge, SizeText(done.Freed))
	if done.DryRun && len(done.Removed) > 0 && err == nil {
		_, err = fmt.Fprintln(w, "nothing was removed: run it again without --dry-run to remove them")
	}
	return err
}

// WriteChainsCleaned says what `ralph chain clean` removed, or would
// remove, and what it kept.
func WriteChainsCleaned(w io.Writer, done chain.Cleaned) error {
	verb := "removed"
	if done.DryRun {
		verb = "would remove"
	}
	for _, c := range done.Removed {
		fmt.Fprintf(w, "%s chain %s (%s, %s, %s)\n", verb, c.ID, c.Status, AgeText(time.Duration(c.AgeSeconds)*time.Second)+" idle", SizeText(c.Bytes))
	}
	for _, k := range done.Kept {
		fmt.Fprintf(w, "kept chain %s: %s\n", k.ID, k.Why)
	}
	var bounds []string
	if done.MaxAge != "" {
		bounds = append(bounds, "idle for more than "+done.MaxAge)
	}
	if done.Keep > 0 {
		bounds = append(bounds, fmt.Sprintf("past the %d latest", done.Keep))
	}
	if len(bounds) == 0 {
		bounds = []string{"of any age"}
	}
	_, err := fmt.Fprintf(w, "%s %s %s, %s freed\n", verb,
		plural.Count(len(done.Removed), "chain", "chains"), strings.Join(bounds, " and "), SizeText(done.Freed))
	if done.DryRun && len(done.Removed) > 0 && err == nil {
		_, err = fmt.Fprintln(w, "nothing was removed: run it again without --dry-run to remove them")
	}
	return err
}

// AgeText is a length of time as people say an age: "45s", "12m", "5h",
// "3d".
func AgeText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// SizeText is a number of bytes as people read it: "512 B", "1.5 KiB",
// "23.0 MiB".
func SizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

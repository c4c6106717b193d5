package view

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

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

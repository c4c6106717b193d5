package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

type runsCmd struct {
	List  runsListCmd  `cmd:"" default:"withargs" help:"List the runs of this workspace: how each ended, how long it has been idle, what it keeps on disk (the default)."`
	Clean runsCleanCmd `cmd:"" help:"Remove the runs idle for longer than --max-age: their event logs and everything under .ralph/runs/<id>/."`
}

func (runsCmd) Help() string {
	return `The runs of this workspace, the current one and the archived ones: each is an
event log (.ralph/events-*.jsonl) and a directory (.ralph/runs/<id>/) with the
agent's raw output, its activity and the run's summary.

A run's age is measured from its end, the loop.terminate line of its log (a
file's time is reset by a copy); a run cut off without one ages from its log's
last change.

Examples:
  ralph runs
  ralph runs --json | jq -r '.[] | select(.ended == "max_iterations") | .run_id'
  ralph runs clean --max-age 30d --dry-run
  ralph runs clean --max-age 2w`
}

type runsListCmd struct {
	JSON bool `name:"json" help:"Print them as one JSON array."`
}

func (runsListCmd) Help() string {
	return `Lists the runs of this workspace, oldest first: each one's id, how it ended
(completed, max_iterations, interrupted, …, running, or unfinished when ralph
was killed), how long ago it ended, and what its log and directory take on
disk. The current run is marked *. It changes nothing.

Examples:
  ralph runs list
  ralph runs --json`
}

func (c *runsListCmd) Run(g *globals) error {
	now := time.Now()
	runs, err := runfiles.RunsOnDisk(g.Dir, now)
	if err != nil {
		return err
	}
	if c.JSON {
		return indentedJSON(g.stdout, runs)
	}
	return view.WriteRunsOnDisk(g.stdout, runs, now)
}

type runsCleanCmd struct {
	MaxAge flagvalue.Age `name:"max-age" required:"" placeholder:"D" help:"Remove the runs that ended longer ago than D: 30d, 2w, 36h."`
	DryRun bool          `name:"dry-run" help:"Say which runs would go, and remove nothing."`
	JSON   bool          `name:"json" help:"Print what was removed and kept as one JSON object."`
}

func (runsCleanCmd) Help() string {
	return `Removes the runs that ended longer ago than --max-age: each one's event log and
its directory under .ralph/runs/<id>/ (raw agent output, activity, summary, the
archived checkpoint). It never removes the current run (the one
.ralph/current-events names, which ralph loop --resume goes on with) or a run
whose loop is running, however old. A link planted under .ralph/ is removed,
never followed: nothing outside .ralph/ is touched.

Examples:
  ralph runs clean --max-age 30d
  ralph runs clean --max-age 7d --dry-run
  ralph runs clean --max-age 2w --json`
}

func (c *runsCleanCmd) Run(g *globals) error {
	maxAge := time.Duration(c.MaxAge)
	done, err := runfiles.CleanRuns(g.Dir, maxAge, time.Now(), c.DryRun)
	done.MaxAge = view.AgeText(maxAge)
	if c.JSON {
		if werr := indentedJSON(g.stdout, done); werr != nil {
			return werr
		}
	} else if werr := view.WriteRunsCleaned(g.stdout, done); werr != nil {
		return werr
	}
	return err
}

// indentedJSON prints v as indented JSON, as the commands that print one
// document do.
func indentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

type eventsCmd struct {
	Topic     string               `placeholder:"GLOB" help:"Only events whose topic matches GLOB (e.g. 'build.*', '*.done')."`
	Hat       string               `placeholder:"HAT" help:"Only events of this hat (published by it, or ralph's lines about its iterations)."`
	Iteration flagvalue.AtLeastOne `placeholder:"N" help:"Only events of iteration N."`
	Since     string               `placeholder:"DURATION|TIME" help:"Only events from the last DURATION (10m, 2h) or since TIME (2026-11-22T10:00:00Z, '2026-11-22 10:00', 10:00 today)."`
	Last      flagvalue.AtLeastOne `placeholder:"N" help:"Only the last N matching events (then, with -f, the new ones)."`
	RunID     string               `name:"run" placeholder:"ID" xor:"log" help:"Read the log of an earlier run, or of a chain's step (an id or a unique prefix; --runs lists them)."`
	File      string               `placeholder:"FILE" xor:"log" help:"Read this event log instead of the current run's."`
	Runs      bool                 `help:"List the runs of this workspace: id, start, how each ended, its log."`
	Autopilot bool                 `help:"Read the autopilot's event log (.ralph/autopilot-events.jsonl) instead of a run's."`
	Task      string               `placeholder:"ID" help:"Read the loop log of the autopilot's task ID: its copy of a remote task's, or its worktree's."`
	Offset    flagvalue.ZeroOrMore `placeholder:"N" help:"Only the event whose line starts at byte N of the log: the offset a prompt names for a payload too long to show whole, or that iteration.started lists."`
	JSON      bool                 `name:"json" xor:"format" help:"Print the raw JSON lines, ready for jq."`
	Payload   bool                 `xor:"format" help:"Print only the payload of each event, whole: text as it is, JSON indented."`
	Follow    bool                 `short:"f" help:"Keep printing events as they are appended, until the run ends or Ctrl-C."`
}

func (eventsCmd) Help() string {
	return `Lists the events of the current run (or of an earlier one): what ralph and the
agent published, how each agent event was routed or why it was rejected, how
iterations ended. ralph's own lines are shown as sentences; --json prints the
log's lines unchanged. It streams, so a log of millions of lines is listed in
constant memory.

Examples:
  ralph events
  ralph events --topic 'build.*' --since 10m
  ralph events --hat reviewer --last 20
  ralph events -f                                  # follow the running loop
  ralph events --runs                              # the runs of this workspace
  ralph events --run 20261122-1000 --iteration 3
  ralph events --autopilot --topic 'task.*'        # the autopilot's events
  ralph events --task t-12 -f                      # an autopilot task's loop, here or on a worker
  ralph events --json | jq -c 'select(.topic == "iteration.finished") | .payload'
  ralph events --topic test.log --last 1 --payload # one payload, however long
  ralph events --offset 48213 --payload            # the event a prompt names`
}

// Validate rejects the flags --runs would ignore: it lists runs, not
// events, so a filter or a log to read says the user meant something else.
// It rejects with --autopilot what an autopilot's log has no use for, and
// with --task what picks another log.
func (c *eventsCmd) Validate() error {
	if c.Offset.Value() != nil {
		if err := c.validateOffset(); err != nil {
			return err
		}
	}
	if c.Task != "" {
		return c.validateTask()
	}
	if c.Autopilot {
		return c.validateAutopilot()
	}
	if !c.Runs {
		return nil
	}
	given := []struct {
		set  bool
		flag string
	}{
		{c.Topic != "", "--topic"}, {c.Hat != "", "--hat"}, {c.Iteration > 0, "--iteration"},
		{c.Since != "", "--since"}, {c.Last > 0, "--last"}, {c.RunID != "", "--run"},
		{c.File != "", "--file"}, {c.Follow, "--follow"}, {c.Payload, "--payload"},
	}
	for _, g := range given {
		if g.set {
			return fmt.Errorf("--runs and %s can't be used together: --runs lists the runs, not their events; drop --runs to list events, or pick a run with --run ID", g.flag)
		}
	}
	return nil
}

// validateOffset rejects what --offset makes meaningless: it names one
// line of one log, so there is nothing to filter, count or follow.
func (c *eventsCmd) validateOffset() error {
	const why = "--offset names one event already"
	return conflicting("--offset",
		conflict{c.Runs, "--runs", "--runs lists the runs, not events; pick a run's log with --run ID"},
		conflict{c.Topic != "", "--topic", why},
		conflict{c.Hat != "", "--hat", why},
		conflict{c.Iteration > 0, "--iteration", why},
		conflict{c.Since != "", "--since", why},
		conflict{c.Last > 0, "--last", why},
		conflict{c.Follow, "--follow", "--offset names an event already in the log; follow the log without it"})
}

// validateAutopilot rejects the flags that pick another log, or filter on
// what only a loop's events have: the autopilot's events are about tasks,
// not hats or iterations.
func (c *eventsCmd) validateAutopilot() error {
	return conflicting("--autopilot",
		conflict{c.Runs, "--runs", "--runs lists the runs of a loop; drop --autopilot to list them"},
		conflict{c.RunID != "", "--run", "--run reads a loop's log; drop --autopilot to read it"},
		conflict{c.File != "", "--file", "--file reads the given log; drop --autopilot to read it"},
		conflict{c.Hat != "", "--hat", "the autopilot's events are about tasks, not hats; read a task's loop with --task ID"},
		conflict{c.Iteration > 0, "--iteration", "the autopilot's events are about tasks, not iterations; read a task's loop with --task ID"})
}

// validateTask rejects the flags that pick another log than the task's.
func (c *eventsCmd) validateTask() error {
	return conflicting("--task",
		conflict{c.Autopilot, "--autopilot", "--task reads a task's loop, --autopilot the autopilot's own events; drop one"},
		conflict{c.Runs, "--runs", "--runs lists the runs of this workspace; run it in the task's worktree"},
		conflict{c.RunID != "", "--run", "--run picks a run of this workspace; --task reads the task's current loop log"},
		conflict{c.File != "", "--file", "--file reads the given log; drop --task to read it"})
}

// conflict is a flag that can't be used with another, whether it is given,
// and why.
type conflict struct {
	set       bool
	flag, why string
}

// conflicting says that the first given of others can't be used with flag.
func conflicting(flag string, others ...conflict) error {
	for _, o := range others {
		if o.set {
			return fmt.Errorf("%s and %s can't be used together: %s", flag, o.flag, o.why)
		}
	}
	return nil
}

func (c *eventsCmd) Run(ctx context.Context, g *globals) (err error) {
	out := bufio.NewWriter(g.stdout)
	defer func() {
		// What is still buffered when the listing ends: a failure to write
		// it is the command's failure, unless it already has one.
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
	}()
	if c.Runs {
		runs, err := runfiles.Runs(g.Dir)
		if err != nil {
			return err
		}
		return view.PrintRuns(out, runs, c.JSON, time.Local)
	}
	filter, err := c.query().Filter(time.Now())
	if err != nil {
		return err
	}
	path, err := c.logPath(g.Dir)
	switch {
	case errors.Is(err, runfiles.ErrNoLog) && c.Follow && !c.Autopilot && c.Task == "":
		path, err = runfiles.AwaitRun(ctx, g.Dir, func() {
			fmt.Fprintln(g.stderr, "ralph: no run here yet; waiting for one to start (Ctrl-C to stop)")
		})
		if path == "" && err == nil {
			return nil // Ctrl-C before any run started
		}
	case errors.Is(err, runfiles.ErrNoAutopilot) && c.Follow && c.Autopilot:
		path, err = runfiles.AwaitAutopilot(ctx, g.Dir, func() {
			fmt.Fprintln(g.stderr, "ralph: no autopilot has run here yet; waiting for one to start (Ctrl-C to stop)")
		})
		if path == "" && err == nil {
			return nil // Ctrl-C before any autopilot started
		}
	}
	if err != nil {
		return err
	}
	p := &view.EventPrinter{W: out, JSON: c.JSON, Payload: c.Payload, Loc: time.Local, Autopilot: c.Autopilot,
		Redactor: readerRedactor(g.Dir)}
	if at := c.Offset.Value(); at != nil {
		return printEventAt(p, path, int64(*at))
	}
	if place, _, ok := view.ChainHere(g.Dir); ok && c.File == "" && c.RunID == "" && !c.Autopilot && c.Task == "" {
		// stderr: stdout may be JSON lines.
		fmt.Fprintf(g.stderr, "ralph: %s (run %s)\n", place.Where, place.ID)
	}
	listing := view.EventListing{Printer: p, Filter: filter, Last: int(c.Last), Follow: c.Follow, Autopilot: c.Autopilot, Flush: out.Flush}
	if c.Task != "" && path == runfiles.In(g.Dir).RemoteEvents(c.Task) {
		// A worker that hands the task back is followed by another, which
		// appends its run to the same copy of the task's log.
		listing.GoesOn = func() bool { return runfiles.TaskGoesOn(g.Dir, c.Task) }
		listing.Watch = runfiles.In(g.Dir).AutopilotEvents()
	}
	if err := listing.List(ctx, path); err != nil {
		return err
	}
	if p.Malformed > 0 {
		// --last reads only the log's end, and counts only what it read.
		var scope string
		if c.Last > 0 {
			scope = fmt.Sprintf("; --last %d reads only the log's end, so lines before it were not counted", c.Last)
		}
		fmt.Fprintf(g.stderr, "ralph: warning: left out %s of %s (not JSON events)%s\n",
			plural.Count(p.Malformed, "malformed line", "malformed lines"), path, scope)
	}
	return nil
}

// printEventAt prints the event whose line starts at offset of the log at
// path.
func printEventAt(p *view.EventPrinter, path string, offset int64) error {
	rec, err := api.EventAt(path, offset)
	if err != nil {
		return err
	}
	if rec.Err != nil && p.LeavesOutMalformed() {
		return fmt.Errorf("the line at offset %d of %s is not an event: %w", offset, path, rec.Err)
	}
	if err := p.Header(); err != nil {
		return err
	}
	return p.Print(rec)
}

// query is the flags as the API's query, which picks the log and filters.
func (c *eventsCmd) query() api.EventQuery {
	return api.EventQuery{Topic: c.Topic, Hat: c.Hat, Iteration: int(c.Iteration), Since: c.Since, Last: int(c.Last),
		Task: c.Task, Autopilot: c.Autopilot, Run: c.RunID}
}

func (c *eventsCmd) logPath(dir string) (string, error) {
	if c.File == "" {
		return c.query().LogPath(dir)
	}
	if filepath.IsAbs(c.File) {
		return c.File, nil
	}
	return filepath.Join(dir, c.File), nil
}

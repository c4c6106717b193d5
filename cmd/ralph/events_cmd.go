package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/view"
)

type eventsCmd struct {
	Topic     string     `placeholder:"GLOB" help:"Only events whose topic matches GLOB (e.g. 'build.*', '*.done')."`
	Hat       string     `placeholder:"HAT" help:"Only events of this hat (published by it, or ralph's lines about its iterations)."`
	Iteration atLeastOne `placeholder:"N" help:"Only events of iteration N."`
	Since     string     `placeholder:"DURATION|TIME" help:"Only events from the last DURATION (10m, 2h) or since TIME (2026-11-22T10:00:00Z, '2026-11-22 10:00', 10:00 today)."`
	Last      atLeastOne `placeholder:"N" help:"Only the last N matching events (then, with -f, the new ones)."`
	RunID     string     `name:"run" placeholder:"ID" xor:"log" help:"Read the log of an earlier run (an id or a unique prefix; --runs lists them)."`
	File      string     `placeholder:"FILE" xor:"log" help:"Read this event log instead of the current run's."`
	Runs      bool       `help:"List the runs of this workspace: id, start, how each ended, its log."`
	JSON      bool       `name:"json" help:"Print the raw JSON lines, ready for jq."`
	Follow    bool       `short:"f" help:"Keep printing events as they are appended, until the run ends or Ctrl-C."`
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
  ralph events --json | jq -c 'select(.topic == "iteration.finished") | .payload'`
}

// Validate rejects the flags --runs would ignore: it lists runs, not
// events, so a filter or a log to read says the user meant something else.
func (c *eventsCmd) Validate() error {
	if !c.Runs {
		return nil
	}
	given := []struct {
		set  bool
		flag string
	}{
		{c.Topic != "", "--topic"}, {c.Hat != "", "--hat"}, {c.Iteration > 0, "--iteration"},
		{c.Since != "", "--since"}, {c.Last > 0, "--last"}, {c.RunID != "", "--run"},
		{c.File != "", "--file"}, {c.Follow, "--follow"},
	}
	for _, g := range given {
		if g.set {
			return fmt.Errorf("--runs and %s can't be used together: --runs lists the runs, not their events; drop --runs to list events, or pick a run with --run ID", g.flag)
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
		runs, err := engine.Runs(g.Dir)
		if err != nil {
			return err
		}
		return view.PrintRuns(out, runs, c.JSON, time.Local)
	}
	keep, err := c.filter(time.Now())
	if err != nil {
		return err
	}
	path, err := c.logPath(g.Dir)
	if errors.Is(err, engine.ErrNoLog) && c.Follow {
		path, err = awaitRun(ctx, g.Dir, g.stderr)
		if path == "" && err == nil {
			return nil // Ctrl-C before any run started
		}
	}
	if err != nil {
		return err
	}
	p := &view.EventPrinter{W: out, JSON: c.JSON, Loc: time.Local}
	if err := c.list(ctx, path, keep, p, out); err != nil {
		return err
	}
	if p.Malformed > 0 {
		fmt.Fprintf(g.stderr, "ralph: warning: left out %s of %s (not JSON events)\n",
			plural.Count(p.Malformed, "malformed line", "malformed lines"), path)
	}
	return nil
}

// list prints the log's matching events and, with --follow, those appended
// after, until the run ends or ctx is cancelled.
func (c *eventsCmd) list(ctx context.Context, path string, keep func(events.Record) bool, p *view.EventPrinter, out *bufio.Writer) error {
	// The watch starts before the log is read, so a line appended in
	// between is announced to it rather than lost.
	var watch *fsnotify.Watcher
	if c.Follow {
		w, err := watchLog(path)
		if err != nil {
			return err
		}
		defer w.Close()
		watch = w
	}
	if err := p.Header(); err != nil {
		return err
	}
	s := &logPrinter{keep: keep, p: p, last: newRing(int(c.Last))}
	if err := s.printExisting(path, c.Follow); err != nil {
		return err
	}
	if watch == nil || s.ended {
		return nil
	}
	if err := out.Flush(); err != nil {
		return err
	}
	return s.follow(ctx, watch, path, out)
}

// filter turns the flags into one predicate on records.
func (c *eventsCmd) filter(now time.Time) (func(events.Record) bool, error) {
	if c.Topic != "" {
		if err := events.ValidatePattern(c.Topic); err != nil {
			return nil, withHint(fmt.Errorf("--topic: %w", err), "a pattern is a topic with * for any segment: build.done, build.*, *.done, *")
		}
	}
	var since time.Time
	if c.Since != "" {
		t, err := parseSince(c.Since, now)
		if err != nil {
			return nil, err
		}
		since = t
	}
	f := recordFilter{topic: c.Topic, hat: c.Hat, iteration: int(c.Iteration), since: since}
	return f.keep, nil
}

// recordFilter is the conjunction of the filter flags; zero fields match
// everything.
type recordFilter struct {
	topic     string
	hat       string
	iteration int
	since     time.Time
}

func (f recordFilter) keep(rec events.Record) bool {
	if rec.Err != nil {
		// A malformed line has no topic, hat or time to match; it is shown
		// only when nothing is filtered.
		return f == (recordFilter{})
	}
	ev := rec.Event
	if f.topic != "" && !events.Match(f.topic, ev.Topic) {
		return false
	}
	if !f.since.IsZero() && ev.TS.Before(f.since) {
		return false // a line without a time is before any time
	}
	if f.hat != "" || f.iteration != 0 {
		iteration, hat := view.Who(ev)
		if (f.hat != "" && hat != f.hat) || (f.iteration != 0 && iteration != f.iteration) {
			return false
		}
	}
	return true
}

// parseSince reads --since: a duration back from now, or a point in time.
// Times without a zone are local; a time of day alone means today.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, withHint(fmt.Errorf("--since %s: the duration is negative", s), "give how far back to look, e.g. --since 10m")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location()), nil
		}
	}
	return time.Time{}, withHint(fmt.Errorf("--since %q is neither a duration nor a time", s),
		"use a duration (10m, 1h30m) or a time (2026-11-22T10:00:00Z, '2026-11-22 10:00', 10:00)")
}

func (c *eventsCmd) logPath(dir string) (string, error) {
	switch {
	case c.File != "":
		if filepath.IsAbs(c.File) {
			return c.File, nil
		}
		return filepath.Join(dir, c.File), nil
	case c.RunID != "":
		return engine.FindRun(dir, c.RunID)
	}
	path, err := engine.CurrentLog(dir)
	if errors.Is(err, engine.ErrNoLog) {
		return "", withHint(fmt.Errorf("no run here: %w in %s", err, filepath.Join(dir, engine.DirName)),
			"start one with `ralph loop`, or pass --file or --run")
	}
	return path, err
}

// awaitRun waits, for --follow, until a run starts in dir and returns its
// log; "" when ctx ends first. It makes .ralph/ (ignored by git, as ralph
// makes it) so that there is a directory to watch.
func awaitRun(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	ralphDir := filepath.Join(dir, engine.DirName)
	if err := engine.IgnoreOwnFilesIfMissing(ralphDir); err != nil {
		return "", err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return "", fmt.Errorf("wait for a run in %s: %w", ralphDir, err)
	}
	defer w.Close()
	if err := w.Add(ralphDir); err != nil {
		return "", fmt.Errorf("wait for a run in %s: %w", ralphDir, err)
	}
	fmt.Fprintln(stderr, "ralph: no run here yet; waiting for one to start (Ctrl-C to stop)")
	for {
		// Checked after the watch began, so a run that starts in between
		// is not missed.
		path, err := engine.CurrentLog(dir)
		if !errors.Is(err, engine.ErrNoLog) {
			return path, err
		}
		select {
		case <-ctx.Done():
			return "", nil
		case <-w.Events:
		case err := <-w.Errors:
			return "", fmt.Errorf("wait for a run in %s: %w", ralphDir, err)
		}
	}
}

// logPrinter prints a log's matching records, keeping the last N when
// --last asks, and notices where the run ended.
type logPrinter struct {
	keep func(events.Record) bool
	p    *view.EventPrinter
	last *ring // nil without --last
	// offset is just past the last complete line read.
	offset int64
	// ended is set by a loop.terminate line and cleared by a later
	// loop.resumed: whether the run is over as far as the log says.
	ended bool
}

func (s *logPrinter) record(rec events.Record) error {
	s.offset = rec.End()
	// Only ralph's own lines say where a run is: an agent may write any
	// topic (the engine rejects it, but the line is in the log).
	if src := rec.Event.Source; rec.Err == nil && src != events.SourceAgent && src != events.SourceTag {
		switch rec.Event.Topic {
		case engine.TopicLoopTerminate:
			s.ended = true
		case engine.TopicLoopResumed, engine.TopicLoopStarted:
			s.ended = false
		}
	}
	if !s.keep(rec) {
		return nil
	}
	if rec.Err != nil && s.p.JSON {
		// --json leaves a malformed line out, so it is not one of the
		// --last N either.
		s.p.Malformed++
		return nil
	}
	if s.last != nil {
		s.last.push(rec)
		return nil
	}
	return s.p.Print(rec)
}

// printExisting streams the log as it is now. A log that does not exist
// yet is empty when following (it will be created), an error otherwise.
func (s *logPrinter) printExisting(path string, follow bool) error {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && follow:
	case err != nil:
		return fmt.Errorf("open event log: %w", err)
	default:
		defer f.Close()
		if err := events.Scan(f, s.record); err != nil {
			return fmt.Errorf("read event log %s: %w", path, err)
		}
	}
	if s.last != nil {
		for _, rec := range s.last.drain() {
			if err := s.p.Print(rec); err != nil {
				return err
			}
		}
		s.last = nil // what follows is new and printed as it comes
	}
	return nil
}

// watchLog watches the log's directory rather than the file, so the watch
// works before the file exists and survives an editor replacing it.
func watchLog(path string) (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", path, err)
	}
	if err := w.Add(filepath.Dir(path)); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("follow %s: watch its directory: %w", path, err)
	}
	return w, nil
}

// follow prints what is appended to the log, reading from the offset each
// time the watcher reports a write, until a loop.terminate line or ctx is
// done (Ctrl-C, which ends it with status 0).
func (s *logPrinter) follow(ctx context.Context, w *fsnotify.Watcher, path string, out *bufio.Writer) error {
	rd := events.NewReader(path, s.offset)
	target := filepath.Clean(path)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			return fmt.Errorf("follow %s: %w", path, err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) != target || !ev.Has(fsnotify.Write|fsnotify.Create) {
				continue
			}
			recs, err := rd.Read()
			if err != nil {
				return err
			}
			for _, rec := range recs {
				if err := s.record(rec); err != nil {
					return err
				}
			}
			if err := out.Flush(); err != nil {
				return err
			}
			if s.ended {
				return nil
			}
		}
	}
}

// ring keeps the last n records pushed, for --last: memory is bounded by n,
// not by the log.
type ring struct {
	buf  []events.Record
	next int
	full bool
}

// newRing returns nil for n == 0, meaning no --last.
func newRing(n int) *ring {
	if n <= 0 {
		return nil
	}
	return &ring{buf: make([]events.Record, n)}
}

func (r *ring) push(rec events.Record) {
	r.buf[r.next] = rec
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// drain returns the records oldest first.
func (r *ring) drain() []events.Record {
	if !r.full {
		return r.buf[:r.next]
	}
	return append(r.buf[r.next:len(r.buf):len(r.buf)], r.buf[:r.next]...)
}

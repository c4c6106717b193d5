package view

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// EventFilter is the conjunction of `ralph events`' filters; zero fields
// match everything.
type EventFilter struct {
	Topic     string // a topic pattern, already valid
	Hat       string
	Iteration int
	Since     time.Time
}

// Keep reports whether the filter lets rec through.
func (f EventFilter) Keep(rec events.Record) bool {
	if rec.Err != nil {
		// A malformed line has no topic, hat or time to match; it is shown
		// only when nothing is filtered.
		return f == (EventFilter{})
	}
	ev := rec.Event
	if f.Topic != "" && !events.Match(f.Topic, ev.Topic) {
		return false
	}
	if !f.Since.IsZero() && ev.TS.Before(f.Since) {
		return false // a line without a time is before any time
	}
	if f.Hat != "" || f.Iteration != 0 {
		iteration, hat := Who(ev)
		if (f.Hat != "" && hat != f.Hat) || (f.Iteration != 0 && iteration != f.Iteration) {
			return false
		}
	}
	return true
}

// EventListing is what `ralph events` prints of one log: its events that
// pass Filter (the last Last of them, when Last > 0) and, with Follow,
// those appended after, until the run ends.
type EventListing struct {
	Printer *EventPrinter
	Filter  EventFilter
	Last    int
	Follow  bool
	// Autopilot says the log is an autopilot's (.ralph/autopilot-events.jsonl)
	// rather than a loop's: a follow ends at its autopilot.stopped.
	Autopilot bool
	// Flush pushes out what Printer's writer buffers; it is called before
	// each wait for more of the log.
	Flush func() error
}

// List prints the log at path's matching events and, with Follow, those
// appended after, until the run ends or ctx is cancelled (Ctrl-C, which
// ends it without error).
func (l *EventListing) List(ctx context.Context, path string) error {
	// The watch starts before the log is read, so a line appended in
	// between is announced to it rather than lost.
	var watch *fsnotify.Watcher
	if l.Follow {
		w, err := watchLog(path)
		if err != nil {
			return err
		}
		defer w.Close()
		watch = w
	}
	if err := l.Printer.Header(); err != nil {
		return err
	}
	s := &logPrinter{keep: l.Filter.Keep, p: l.Printer, last: newRing(l.Last), autopilot: l.Autopilot}
	if err := s.printExisting(path, l.Follow); err != nil {
		return err
	}
	if watch == nil || s.ended {
		return nil
	}
	if err := l.Flush(); err != nil {
		return err
	}
	return s.follow(ctx, watch, path, l.Flush)
}

// logPrinter prints a log's matching records, keeping the last N when
// --last asks, and notices where the run ended.
type logPrinter struct {
	keep func(events.Record) bool
	p    *EventPrinter
	last *ring // nil without --last
	// offset is just past the last complete line read.
	offset int64
	// ended is set by a loop.terminate line and cleared by a later
	// loop.resumed: whether the run is over as far as the log says.
	ended bool
	// autopilot: the log is an autopilot's, whose runs end with
	// autopilot.stopped and start (or go on) with autopilot.started.
	autopilot bool
}

func (s *logPrinter) record(rec events.Record) error {
	s.offset = rec.End()
	// Only ralph's own lines say where a run is: an agent may write any
	// topic (the engine rejects it, but the line is in the log).
	if src := rec.Event.Source; rec.Err == nil && src != events.SourceAgent && src != events.SourceTag {
		s.notice(rec.Event.Topic)
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

// notice follows where the run is from one of ralph's own topics.
func (s *logPrinter) notice(topic string) {
	end, start := []string{engine.TopicLoopTerminate}, []string{engine.TopicLoopResumed, engine.TopicLoopStarted}
	if s.autopilot {
		// An interrupted autopilot ends with autopilot.stopped too: the
		// process is gone, and the next one starts with autopilot.started.
		end, start = []string{autopilot.TopicStopped}, []string{autopilot.TopicStarted}
	}
	switch {
	case slices.Contains(end, topic):
		s.ended = true
	case slices.Contains(start, topic):
		s.ended = false
	}
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
func (s *logPrinter) follow(ctx context.Context, w *fsnotify.Watcher, path string, flush func() error) error {
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
			if err := flush(); err != nil {
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

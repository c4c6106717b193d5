package view

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/runfiles"
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
	// each wait for more of the log, and once the last N are printed
	// (reading on to the run's start may follow). Nil flushes nothing.
	Flush func() error
	// GoesOn, when set, is asked when a follow reaches a run that was cut
	// off (its loop.terminate says interrupted or stopped) whether another
	// loop will append its run to the same log, as the next worker does
	// to a remote task's copy. While it says so the follow goes on; it is
	// asked again each time Watch changes. Nil: a cut-off run ends it.
	GoesOn func() bool
	// Watch is a file whose changes may change GoesOn's or Until's answer
	// (the autopilot's event log, the workspace's current-events), or "".
	Watch string
	// From, when not 0, is where the listing starts: an earlier listing's
	// End, so that a follow of the log's next run goes on where the last
	// one stopped. Every line from there is printed; Last is not used.
	From int64
	// Until, when set, is asked each time a follow wakes; true ends it as
	// the run's end does (the workspace has moved on to another log).
	Until func() bool
	// End is set by List: the offset just past the last line it read.
	End int64
}

// List prints the log at path's matching events and, with Follow, those
// appended after, until the run ends or ctx is cancelled (Ctrl-C, which
// ends it without error).
func (l *EventListing) List(ctx context.Context, path string) error {
	// The watch starts before the log is read, so a line appended in
	// between is announced to it rather than lost.
	var watch *filewatch.Watch
	if l.Follow {
		w, err := watchLog(path, l.Watch)
		if err != nil {
			return err
		}
		defer w.Close()
		watch = w
	}
	if err := l.Printer.Header(); err != nil {
		return err
	}
	s := &logPrinter{keep: l.Filter.Keep, filter: l.Filter.prefilter(), p: l.Printer, flush: l.flush, last: l.Last, autopilot: l.Autopilot}
	defer func() { l.End = s.offset }()
	if err := s.printFrom(path, l.From, l.Follow); err != nil {
		return err
	}
	if watch == nil || l.over(s) {
		return nil
	}
	if err := l.flush(); err != nil {
		return err
	}
	return l.follow(ctx, s, watch, path)
}

// over reports whether the log's run is over for a follow: it ended, and
// unless it was cut off, no other loop goes on in the same log.
func (l *EventListing) over(s *logPrinter) bool {
	return s.ended && !(s.cutOff && l.GoesOn != nil && l.GoesOn())
}

// flush is Flush, or nothing without one.
func (l *EventListing) flush() error {
	if l.Flush == nil {
		return nil
	}
	return l.Flush()
}

// logPrinter prints a log's matching records, keeping the last N when
// --last asks, and notices where the run ended.
type logPrinter struct {
	keep   func(events.Record) bool
	filter *linePrefilter // nil: every line is decoded
	p      *EventPrinter
	flush  func() error // pushes out what p's writer buffers
	dec    events.Decoder
	last   int // --last, or 0
	// offset is just past the last complete line read.
	offset int64
	// ended is set by a loop.terminate line and cleared by a later
	// loop.resumed: whether the run is over as far as the log says.
	ended bool
	// cutOff says the loop.terminate that set ended says interrupted or
	// stopped: another loop may go on with the task.
	cutOff bool
	// autopilot: the log is an autopilot's, whose runs end with
	// autopilot.stopped and start (or go on) with autopilot.started.
	autopilot bool
}

func (s *logPrinter) record(rec events.Record) error {
	return s.recordFilled(rec, false)
}

// recordFilled is record for a line p.decode decoded, filled as it said.
func (s *logPrinter) recordFilled(rec events.Record, filled bool) error {
	s.offset = rec.End()
	s.noticeRecord(rec)
	if !s.keep(rec) {
		return nil
	}
	if rec.Err != nil && s.p.LeavesOutMalformed() {
		// --json leaves a malformed line out, so it is not one of the
		// --last N either.
		s.p.Malformed++
		return nil
	}
	return s.p.print(rec, filled)
}

// noticeRecord follows where the run is from one of ralph's own lines,
// and reports whether rec was one that says so. Only ralph's own lines
// count: an agent may write any topic (the engine rejects it, but the line
// is in the log).
func (s *logPrinter) noticeRecord(rec events.Record) bool {
	if src := rec.Event.Source; rec.Err != nil || src == events.SourceAgent || src == events.SourceTag || src == events.SourceHuman {
		return false
	}
	end, start := s.boundaries()
	switch {
	case slices.Contains(end, rec.Event.Topic):
		s.ended, s.cutOff = true, !s.autopilot && cutOff(rec.Event)
	case slices.Contains(start, rec.Event.Topic):
		s.ended = false
	default:
		return false
	}
	return true
}

// cutOff reports whether a loop.terminate says its run was cut off rather
// than judged.
func cutOff(ev events.Event) bool {
	var t viewTerminate
	return decodeView(ev, &t) && t.Reason.Unfinished()
}

// boundaries are the topics of ralph's lines that end a run and that start
// (or resume) one.
func (s *logPrinter) boundaries() (end, start []string) {
	if s.autopilot {
		// An interrupted autopilot ends with autopilot.stopped too: the
		// process is gone, and the next one starts with autopilot.started.
		return []string{runfiles.TopicAutopilotStopped}, []string{runfiles.TopicAutopilotStarted}
	}
	return []string{runfiles.TopicLoopTerminate}, []string{runfiles.TopicLoopResumed, runfiles.TopicLoopStarted}
}

// mayNotice reports whether a line may be one noticeRecord acts on.
func (s *logPrinter) mayNotice(line []byte) bool {
	end, start := s.boundaries()
	return s.filter.mayHoldAny(line, end) || s.filter.mayHoldAny(line, start)
}

// printFrom prints the log as it is now from offset from: all of it, or
// its last N, when from is 0.
func (s *logPrinter) printFrom(path string, from int64, follow bool) error {
	if from == 0 {
		return s.printExisting(path, follow)
	}
	s.offset = from
	recs, err := events.NewReader(path, from).Read()
	if err != nil {
		return fmt.Errorf("read event log %s: %w", path, err)
	}
	for _, rec := range recs {
		if err := s.record(rec); err != nil {
			return err
		}
	}
	return nil
}

// printExisting prints the log as it is now. A log that does not exist
// yet is empty when following (it will be created), an error otherwise.
func (s *logPrinter) printExisting(path string, follow bool) error {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && follow:
		return nil
	case err != nil:
		return fmt.Errorf("open event log: %w", err)
	}
	defer f.Close()
	if s.last > 0 {
		err = s.printLast(f, follow)
	} else {
		err = s.printAll(f, follow)
	}
	if err != nil {
		return fmt.Errorf("read event log %s: %w", path, err)
	}
	return nil
}

// printAll streams the whole log, decoding only the lines that may pass
// the filter or, when following, say where the run is.
func (s *logPrinter) printAll(f *os.File, follow bool) error {
	return events.ScanLines(f, func(rec events.Record) error {
		line := rec.Line
		if !s.filter.mayKeep(line) && (!follow || !s.mayNotice(line)) {
			s.offset = rec.End()
			return nil
		}
		// Print writes the line before ScanLines reuses it, so the
		// record may borrow it.
		var filled bool
		if rec.Err == nil {
			rec.Event, filled, rec.Err = s.p.decode(&s.dec, line)
		}
		return s.recordFilled(rec, filled)
	})
}

// printLast prints the last N matching records, read from the end of the
// log back until it has N, so that it costs the same in a log of any size.
// When following, it then reads on back to the last line that says where
// the run is (in a live run, its start). Without a filter, --json counts
// the malformed lines among those it read back for the N, and only those:
// the lines before them are not looked at, and neither are the ones a
// follow reads back past them for the run's start. The N are printed as
// soon as they are found.
func (s *logPrinter) printLast(f *os.File, follow bool) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	b := events.NewBackwardScanner(f, info.Size())
	s.offset = b.End()
	var kept []events.Record // newest first
	printed, noticed := false, !follow
	for {
		if !printed && len(kept) == s.last {
			if err := s.printNewestFirst(kept); err != nil {
				return err
			}
			printed = true
		}
		if printed && noticed {
			return nil
		}
		rec, err := b.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		line := rec.Line
		wanted := !printed && s.filter.mayKeep(line)
		if !wanted && (noticed || !s.mayNotice(line)) {
			continue
		}
		if rec.Err == nil {
			rec.Event, rec.Err = s.dec.ParseLine(line)
		}
		if !noticed {
			noticed = s.noticeRecord(rec)
		}
		switch {
		case !wanted || !s.keep(rec):
		case rec.Err != nil && s.p.LeavesOutMalformed():
			// --json leaves a malformed line out, so it is not one of
			// the N: counted, as record counts it.
			s.p.Malformed++
		default:
			rec.Line = bytes.Clone(line) // b reuses its buffer
			kept = append(kept, rec)
		}
	}
	if printed {
		return nil
	}
	return s.printNewestFirst(kept)
}

// printNewestFirst prints records gathered backwards, oldest first, and
// pushes them out: what printLast reads after them may take a while.
func (s *logPrinter) printNewestFirst(recs []events.Record) error {
	for _, rec := range slices.Backward(recs) {
		if err := s.p.Print(rec); err != nil {
			return err
		}
	}
	return s.flush()
}

// watchLog watches the log's directory rather than the file, so the watch
// works before the file exists and survives an editor replacing it; and
// also's, when given.
func watchLog(path, also string) (*filewatch.Watch, error) {
	opt := filewatch.Options{Dirs: []string{filepath.Dir(path)}, Match: filewatch.Only(path), Writes: true}
	if also != "" {
		opt.Dirs = append(opt.Dirs, filepath.Dir(also))
		opt.Match = filewatch.Only(path, also)
	}
	w, err := filewatch.New(opt)
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", path, err)
	}
	return w, nil
}

// follow prints what s has not printed of the log, reading from its offset
// each time the watch says the log (or the file l.Watch names) may have
// changed, until the run is over or ctx is done (Ctrl-C, which ends it
// with status 0).
func (l *EventListing) follow(ctx context.Context, s *logPrinter, w *filewatch.Watch, path string) error {
	rd := events.NewReader(path, s.offset)
	for {
		if l.Until != nil && l.Until() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.C():
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
		if err := l.flush(); err != nil {
			return err
		}
		if l.over(s) {
			return nil
		}
	}
}

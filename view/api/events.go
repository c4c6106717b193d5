package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// EventQuery picks a log and its events as `ralph events`' flags do; zero
// fields pick the current run's log and all of its events.
type EventQuery struct {
	Topic     string `json:"topic,omitempty"`     // a topic pattern: build.*, *.done
	Hat       string `json:"hat,omitempty"`       // events of this hat
	Iteration int    `json:"iteration,omitempty"` // events of this iteration
	// Since is a duration back from now (10m) or a time, as --since takes.
	Since string `json:"since,omitempty"`
	Last  int    `json:"last,omitempty"` // only the last N matching events
	// Task reads the loop log of an autopilot's task; Autopilot the
	// autopilot's own log; Run an earlier run's (an id or unique prefix).
	Task      string `json:"task,omitempty"`
	Autopilot bool   `json:"autopilot,omitempty"`
	Run       string `json:"run,omitempty"`
}

// Filter is the view's filter for q, with its pattern and time checked.
func (q EventQuery) Filter(now time.Time) (view.EventFilter, error) {
	if q.Topic != "" {
		if err := events.ValidatePattern(q.Topic); err != nil {
			return view.EventFilter{}, &hint.Error{Err: err, Fix: "a pattern is a topic with * for any segment: build.done, build.*, *.done, *"}
		}
	}
	if q.Last < 0 || q.Iteration < 0 {
		return view.EventFilter{}, &hint.Error{Err: errors.New("last and iteration count from 1"), Fix: "leave them out for all events"}
	}
	f := view.EventFilter{Topic: q.Topic, Hat: q.Hat, Iteration: q.Iteration}
	if q.Since != "" {
		t, err := flagvalue.ParseSince(q.Since, now)
		if err != nil {
			return view.EventFilter{}, &hint.Error{Err: err, Fix: "a duration back from now (10m, 2h) or a time (2026-11-22T10:00:00Z)"}
		}
		f.Since = t
	}
	return f, nil
}

// LogPath is the log q reads in the workspace dir.
func (q EventQuery) LogPath(dir string) (string, error) {
	switch {
	case q.Task != "":
		path, _, err := runfiles.TaskLog(dir, q.Task)
		if _, ok := errors.AsType[*runfiles.NoTaskLogError](err); ok {
			err = &hint.Error{Err: err, Fix: "`ralph autopilot status` lists the tasks in slots and where they run; a task that has not started has no log"}
		}
		return path, err
	case q.Autopilot:
		path, err := runfiles.AutopilotEventLog(dir)
		if errors.Is(err, runfiles.ErrNoAutopilot) {
			err = &hint.Error{Err: err, Fix: "no autopilot has run here; start one with `ralph autopilot`"}
		}
		return path, err
	case q.Run != "":
		return runfiles.FindRun(dir, q.Run)
	}
	path, err := runfiles.CurrentLogIn(loopDir(dir))
	if errors.Is(err, runfiles.ErrNoLog) {
		return "", &hint.Error{Err: fmt.Errorf("no run here: %w in %s", err, filepath.Join(dir, runfiles.DirName)),
			Fix: "start one with `ralph loop`, or pass --file or --run"}
	}
	return path, err
}

// Line is one event of a log as it is written there. Offset is where the
// line starts; Next where the one after it does, the place to read on
// from (an event stream's id).
type Line struct {
	Offset int64           `json:"offset"`
	Next   int64           `json:"next"`
	Event  json.RawMessage `json:"event"`
}

// LineOf is rec as programs are shown it: where it is in the log, and its
// line with r's secret values hidden, still valid JSON (see
// view.RedactRecord). Offset and Next are the log's, whatever is shown.
func LineOf(r *redact.Redactor, rec events.Record) Line {
	return Line{Offset: rec.Offset, Next: rec.End(), Event: r.Line(rec.Line)}
}

// Events is the events of q's log in the workspace dir that q lets
// through, in log order, as `ralph events --json` lists them, with r's
// secret values hidden; lines that are not events are counted in
// malformed and left out.
func Events(ctx context.Context, dir string, q EventQuery, now time.Time, r *redact.Redactor) (lines []Line, malformed int, err error) {
	filter, err := q.Filter(now)
	if err != nil {
		return nil, 0, err
	}
	path, err := q.LogPath(dir)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	err = events.Scan(f, func(rec events.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rec.Err != nil {
			malformed++
			return nil
		}
		if !filter.Keep(rec) {
			return nil
		}
		// Hidden once the last N are known: a line left out costs no scan.
		lines = append(lines, Line{Offset: rec.Offset, Next: rec.End(), Event: json.RawMessage(rec.Line)})
		if q.Last > 0 && len(lines) > 2*q.Last {
			lines = append(lines[:0], lines[len(lines)-q.Last:]...)
		}
		return nil
	})
	if q.Last > 0 && len(lines) > q.Last {
		lines = lines[len(lines)-q.Last:]
	}
	for i := range lines {
		lines[i].Event = r.Line(lines[i].Event)
	}
	return lines, malformed, err
}

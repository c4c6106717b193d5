package engine

import (
	"context"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// hookLines adds what a line folded into st gives the hooks: ralph's own
// line, and for an event.routed the agent's line it accepts, before it.
// It must be called before the line is applied, while the accepted line is
// still undecided.
func (e *Engine) hookLines(st *runfiles.RunState, out []events.Record, rec events.Record) []events.Record {
	if e.opts.Hooks == nil || rec.Err != nil || rec.Event.Source != events.SourceRalph {
		return out // an agent's line waits for its decision
	}
	if rec.Event.Topic == runfiles.TopicEventRouted {
		var r runfiles.RoutedRecord
		runfiles.Decode(rec.Event, &r)
		for _, u := range st.Undecided {
			if u.Offset == r.Offset {
				out = append(out, events.Record{Offset: u.Offset, Event: u.Event})
			}
		}
	}
	return append(out, rec)
}

// fireHooks runs the hooks the folded lines make due. A failure of the
// log ends the step; a hook's failure ends the run after it (afterHooks).
func (e *Engine) fireHooks(lines []events.Record) error {
	if e.opts.Hooks == nil || len(lines) == 0 {
		return nil
	}
	ctx := e.hookCtx
	if ctx == nil {
		ctx = context.Background()
	}
	var appendErr error
	warnings, err := e.opts.Hooks.Fire(ctx, e.st.RunID, lines, func(lines ...events.Event) error {
		appendErr = e.append(lines...)
		return appendErr
	})
	for _, w := range warnings {
		e.opts.Reporter.Warn(w)
	}
	switch {
	case appendErr != nil:
		return appendErr
	case err != nil && e.hookFailed == nil:
		e.hookFailed = err
	}
	return nil
}

// afterHooks ends the run as fatal when a hook with on_error: fail failed
// in the step that led to next; a run that was ending already keeps its
// end, and the failure is reported as a warning.
func (e *Engine) afterHooks(next runfiles.Phase) runfiles.Phase {
	err := e.hookFailed
	if err == nil {
		return next
	}
	e.hookFailed = nil
	if e.ending != nil || next == runfiles.PhaseTerminating || next == runfiles.PhaseDone {
		e.opts.Reporter.Warn(err.Error() + "; the run was ending already")
		return next
	}
	e.ending = e.terminate(runfiles.ReasonFatal, err.Error())
	e.fatal = err
	return runfiles.PhaseTerminating
}

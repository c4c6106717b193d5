package autopilot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// journal writes the autopilot's events: each is appended to the log
// before anything acts on it, and synced unless a restart recomputes it
// (recordUnsynced), folded into the state, and the state checkpointed once
// a pass (flush), so a kill at any instant loses nothing the log does not
// have.
type journal struct {
	dir   string // .ralph/
	log   *events.Log
	state *runfiles.AutopilotState
	now   func() time.Time
	// onEvent is told each event once it is recorded.
	onEvent func(events.Event, *runfiles.AutopilotState)
	// hooks run on each line before the state that folds it is saved;
	// hookCtx is the run's context without its cancellation (each hook
	// has its own time limit).
	hooks   Hooks
	hookCtx context.Context
	// redactor hides secret values in every line before it is written
	// (see write).
	redactor *redact.Redactor
	// unsaved is the time of the latest event folded since the state and
	// progress.md were last written (zero when none was): they are
	// written once a pass of the coordinator (flush), not once an event.
	unsaved time.Time
}

// Hooks run the user's lifecycle hooks (package hooks) on the lines of the
// autopilot's log. The contract is engine.Hooks': Fire is given each line
// as it is folded, before a checkpoint is written past it, appends its own
// lines with appendLines (which folds them and hands them back), and
// returns warnings and, for a hook whose failure ends the run, an error.
type Hooks interface {
	Fire(ctx context.Context, runID string, lines []events.Record,
		appendLines func(...events.Event) error) (warnings []string, err error)
}

// record appends one event, folds it and runs the hooks it makes due; the
// state is checkpointed by the next flush. A hook whose failure ends the run is returned
// once the event is recorded.
func (j *journal) record(topic string, p runfiles.AutopilotPayload) error {
	return j.recordEvent(topic, p, true, true)
}

// recordUnsynced is record without flushing the log to stable storage,
// for an event that a restart which never saw it recomputes: one that
// follows its effect (a loop started, a task closed), or whose effect is
// made again unharmed (a merge begun). The line is written before
// anything acts on it, so a killed autopilot finds it; a machine that
// went down may lose it, with the lines after it up to the next synced
// one, which is the log of a run killed earlier. Each synced record
// flushes those before it. The serial path of a task has six events; a
// flush each held every task behind the disk (8 to 50 ms a flush on a
// busy machine).
func (j *journal) recordUnsynced(topic string, p runfiles.AutopilotPayload) error {
	return j.recordEvent(topic, p, true, false)
}

// recordEvent is record, with the hooks fired or not: a notice of a hook's
// failure must not fire hooks, or a failing hook on autopilot.notice
// would be told of its own failure without end.
func (j *journal) recordEvent(topic string, p runfiles.AutopilotPayload, hooked, synced bool) error {
	recs, err := j.writeSynced(synced, events.Event{TS: j.now().UTC(), Topic: topic, Payload: events.ObjectPayload(p), Source: events.SourceRalph})
	if err != nil {
		return err
	}
	ev := recs[0].Event
	var hookErr error
	if hooked {
		if hookErr, err = j.fire(recs); err != nil {
			return err
		}
	}
	j.unsaved = ev.TS
	if j.onEvent != nil {
		j.onEvent(ev, j.state)
	}
	return hookErr
}

// write appends lines in one write, synced, and folds them. Their secret
// values are hidden first: the text of a task's failure (a verify
// command's output, a tracker's stderr), a hook's output and everything
// else that came from outside ralph reach the log, the state, progress.md,
// the hooks and the terminal from here.
func (j *journal) write(evs ...events.Event) ([]events.Record, error) {
	return j.writeSynced(true, evs...)
}

// writeSynced is write, flushing the log only when synced is set (see
// recordUnsynced).
func (j *journal) writeSynced(synced bool, evs ...events.Event) ([]events.Record, error) {
	for i := range evs {
		evs[i].Payload = j.redactor.JSON(evs[i].Payload)
	}
	if err := j.log.AppendBatch(evs); err != nil {
		return nil, fmt.Errorf("append to %s: %w", runfiles.AutopilotEventsFile, err)
	}
	if synced {
		if err := j.log.Sync(); err != nil {
			return nil, fmt.Errorf("sync %s: %w", runfiles.AutopilotEventsFile, err)
		}
	}
	recs := make([]events.Record, 0, len(evs))
	for _, ev := range evs {
		line, err := events.EncodeLine(ev)
		if err != nil {
			return nil, err
		}
		recs = append(recs, events.Record{Offset: j.state.Offset, Line: line[:len(line)-1], Event: ev})
		j.state.Apply(ev)
		j.state.Offset += int64(len(line))
	}
	return recs, nil
}

// fire hands folded lines to the hooks and runs those due. Warnings
// become notices; a hook that failed with on_error: fail is returned as
// hookErr, a failure to write the log as err.
func (j *journal) fire(recs []events.Record) (hookErr, err error) {
	if j.hooks == nil || len(recs) == 0 {
		return nil, nil
	}
	warnings, hookErr := j.hooks.Fire(j.hookCtx, j.state.RunID, recs, func(evs ...events.Event) error {
		now := j.now().UTC()
		for i := range evs {
			evs[i].TS = now
		}
		recs, err := j.write(evs...)
		if err != nil {
			return err
		}
		_, err = j.fire(recs)
		return err
	})
	var fe interface{ ExitCode() int }
	if hookErr != nil && !errors.As(hookErr, &fe) {
		return nil, hookErr // the log could not be written
	}
	for _, w := range warnings {
		if err := j.recordEvent(runfiles.TopicAutopilotNotice, runfiles.AutopilotPayload{Message: "warning: " + w}, false, true); err != nil {
			return hookErr, err
		}
	}
	return hookErr, nil
}

// flush writes the state atomically, and progress.md, when an event was
// folded since they were last written. The coordinator flushes before it
// waits for what happens next, so the events of one pass (a merge landed,
// its task completed, the next merge started) cost one write of each, not
// one an event. What the files lack meanwhile is in the log, which is
// written first: a reader folds it on from the state's offset
// (runfiles.ReadAutopilotState), and so does a restart after a kill.
func (j *journal) flush() error {
	if j.unsaved.IsZero() {
		return nil
	}
	if err := runfiles.WriteAutopilotState(j.dir, j.state); err != nil {
		return err
	}
	if err := runfiles.WriteProgress(j.dir, j.state, j.unsaved); err != nil {
		return err
	}
	j.unsaved = time.Time{}
	return nil
}

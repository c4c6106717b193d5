package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
)

// TopicHumanAsked is the question a hook may answer by printing
// {"answer": "…"}.
const TopicHumanAsked = "human.asked"

// Options configure a Dispatcher.
type Options struct {
	Hooks []Hook
	// Workspace is where commands run; EventsFile is the log's path.
	Workspace  string
	EventsFile string
	// Answer answers a question (human.asked) with a hook's answer; nil
	// leaves questions to people.
	Answer func(workspace, id, text, by string) error
}

// Dispatcher runs each hook once for each event of one log that it
// matches. The log's owner hands it, in order, every line it folds (see
// Fire); the dispatcher is driven by one goroutine.
type Dispatcher struct {
	opts Options
	due  []job
	// started are the hooks the log says were started and have not
	// ended; mine are those this process started.
	started map[key]string // → the event's topic
	mine    map[key]bool
	busy    bool
}

type key struct {
	hook   string
	offset int64
}

type job struct {
	hook    Hook
	trigger Trigger
}

func (j job) key() key { return key{j.hook.Name, j.trigger.Offset} }

// New makes a dispatcher for a log; nil when there are no hooks.
func New(opts Options) *Dispatcher {
	if len(opts.Hooks) == 0 {
		return nil
	}
	return &Dispatcher{opts: opts, started: map[key]string{}, mine: map[key]bool{}}
}

// FailedError is a hook with on_error: fail that failed: the run ends as
// fatal.
type FailedError struct {
	Result Result
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("hook %s failed on %s: %s", e.Result.Hook, e.Result.Topic, e.Result.Error)
}

// ExitCode makes a failed hook fatal.
func (e *FailedError) ExitCode() int { return exitcode.Fatal }

// Fire takes the lines the log's owner has just folded, in log order, and
// runs the hooks they make due, writing hook.started before and hook.ran
// after each through appendLines (one write each), which must append to
// the log and hand the written lines back to Fire. An agent's line is
// handed over once the owner has accepted it, with the line's own offset;
// ralph's lines as they are folded. The owner must call Fire before it
// writes a checkpoint past a line.
//
// Fire returns when every due hook has run: the warnings to show for hooks
// that failed with on_error: warn, and a *FailedError for the first that
// failed with on_error: fail, or appendLines' error. Called again while it
// runs hooks (through appendLines), it only takes the lines in.
func (d *Dispatcher) Fire(ctx context.Context, runID string, recs []events.Record,
	appendLines func(...events.Event) error) (warnings []string, err error) {
	for _, r := range recs {
		d.take(runID, r)
	}
	if d.busy {
		return nil, nil
	}
	d.busy = true
	defer func() { d.busy = false }()
	var failed error
	for {
		if lost := d.interrupted(); len(lost) > 0 {
			if err := appendLines(lost...); err != nil {
				return warnings, err
			}
			continue
		}
		if len(d.due) == 0 {
			return warnings, failed
		}
		batch := d.due
		d.due = nil
		starts := make([]events.Event, len(batch))
		for i, j := range batch {
			d.mine[j.key()] = true
			starts[i] = line(TopicStarted, startedRecord{Hook: j.hook.Name, Offset: j.trigger.Offset, Topic: j.trigger.Event.Topic})
		}
		if err := appendLines(starts...); err != nil {
			return warnings, err
		}
		for _, j := range batch {
			res := d.run(ctx, j)
			if err := appendLines(line(TopicRan, res)); err != nil {
				return warnings, err
			}
			switch {
			case !res.Failed():
			case j.hook.OnError == OnErrorFail && failed == nil:
				failed = &FailedError{Result: res}
			case j.hook.OnError != OnErrorFail:
				warnings = append(warnings, fmt.Sprintf("hook %s on %s: %s", j.hook.Name, j.trigger.Event.Topic, res.Error))
			}
		}
	}
}

// take folds one line into what is due and what was started.
func (d *Dispatcher) take(runID string, r events.Record) {
	if r.Err != nil {
		return
	}
	ev := r.Event
	switch ev.Topic {
	case TopicStarted:
		var s startedRecord
		if json.Unmarshal(ev.Payload, &s) == nil {
			k := key{s.Hook, s.Offset}
			d.started[k] = s.Topic
			d.due = slices.DeleteFunc(d.due, func(j job) bool { return j.key() == k })
		}
		return
	case TopicRan:
		var res Result
		if json.Unmarshal(ev.Payload, &res) != nil {
			return
		}
		k := key{res.Hook, res.Offset}
		delete(d.started, k)
		delete(d.mine, k)
		if strings.HasPrefix(res.Topic, topicPrefix) {
			return // a hook on a hook's line does not trigger more hooks
		}
	}
	t := Trigger{Event: ev, Offset: r.Offset, Workspace: d.opts.Workspace, RunID: runID, EventsFile: d.opts.EventsFile}
	for _, h := range d.opts.Hooks {
		if h.Matches(ev.Topic) && !d.isStarted(key{h.Name, r.Offset}) {
			d.due = append(d.due, job{hook: h, trigger: t})
		}
	}
}

func (d *Dispatcher) isStarted(k key) bool {
	_, ok := d.started[k]
	return ok
}

// interrupted are hook.ran lines for the hooks the log says were started
// and never ended, by a ralph that is gone: they are not run again.
func (d *Dispatcher) interrupted() []events.Event {
	var lost []events.Event
	for k, topic := range d.started {
		if !d.mine[k] {
			lost = append(lost, line(TopicRan, Result{Hook: k.hook, Offset: k.offset, Topic: topic, Interrupted: true,
				Error: "ralph stopped while the hook ran; it is not run again"}))
		}
	}
	slices.SortFunc(lost, func(a, b events.Event) int { return strings.Compare(string(a.Payload), string(b.Payload)) })
	return lost
}

// run fires one hook and, for a question it answers, gives the answer.
func (d *Dispatcher) run(ctx context.Context, j job) Result {
	res := j.hook.Fire(ctx, j.trigger)
	if res.Failed() || d.opts.Answer == nil || j.trigger.Event.Topic != TopicHumanAsked {
		return res
	}
	text, ok := answerIn(res.Output)
	if !ok {
		return res
	}
	var q struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(j.trigger.Event.Payload, &q)
	if err := d.opts.Answer(d.opts.Workspace, q.ID, text, "hook "+j.hook.Name); err != nil {
		res.Error = "answer: " + err.Error()
		return res
	}
	res.Answered = q.ID
	if res.Answered == "" {
		res.Answered = "pending"
	}
	return res
}

func line(topic string, payload any) events.Event {
	return events.Event{Topic: topic, Payload: events.ObjectPayload(payload), Source: events.SourceRalph}
}

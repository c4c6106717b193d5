package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Emit is one event an agent (or a person or program acting as one)
// publishes to a run's log, as `ralph emit` does.
type Emit struct {
	// Dir is the workspace; File the log, "" for the current run's.
	Dir, File string
	Topic     string
	Payload   json.RawMessage
	// Target delivers the event to this hat only.
	Target string
	// Hat and Iteration say who publishes: the agent's RALPH_HAT and
	// RALPH_ITERATION.
	Hat       string
	Iteration int
	// Source is who publishes, as the line records it: events.SourceAgent
	// (also when "") or events.SourceHuman, a person steering the run.
	Source string
	// Force appends even to a run that has ended for good.
	Force bool
	// Redactor hides secret values in the event; nil is the environment's
	// (redact.FromEnvironment), which is what an agent's `ralph emit`
	// has: its own variables and the names its loop hands on.
	Redactor *redact.Redactor
}

// FromAgentEnv is an Emit to the log, hat and iteration a loop gives its
// agent's environment (RALPH_EVENTS_FILE, RALPH_HAT, RALPH_ITERATION). Run
// where no loop set RALPH_ITERATION, it is a person's (a terminal, an
// editor): its source is events.SourceHuman.
func FromAgentEnv(dir string) Emit {
	n, _ := strconv.Atoi(os.Getenv("RALPH_ITERATION"))
	source := events.SourceAgent
	if os.Getenv("RALPH_ITERATION") == "" {
		source = events.SourceHuman
	}
	return Emit{Dir: dir, File: os.Getenv("RALPH_EVENTS_FILE"), Hat: os.Getenv("RALPH_HAT"), Iteration: n, Source: source}
}

// Payload is text as an event's payload: a JSON string, or with isJSON
// the JSON it holds, checked; "" is no payload.
func Payload(text string, isJSON bool) (json.RawMessage, error) {
	if !isJSON {
		if text == "" {
			return json.RawMessage("null"), nil
		}
		return events.StringPayload(text), nil
	}
	if len(text) > events.MaxLineBytes {
		return nil, TooLongJSON(len(text))
	}
	if !json.Valid([]byte(text)) {
		return nil, &hint.Error{Err: errors.New("the payload is not valid JSON"),
			Fix: `quote it for the shell, e.g. --json '{"ok": true}', or drop --json to send text`}
	}
	return json.RawMessage(strings.TrimSpace(text)), nil
}

// TooLongJSON is the error for a JSON payload of size bytes, more than an
// event line holds: JSON cannot be cut as a text is.
func TooLongJSON(size int) error {
	return &hint.Error{Err: fmt.Errorf("the JSON payload is about %d bytes; an event line holds at most %d", size, events.MaxLineBytes),
		Fix: "write the data to a file and emit its path, or send a shorter summary"}
}

// Append appends e to its log in one write, its secret values redacted.
// warning says, when not "", that the run has ended but will read the
// event when resumed.
func (e Emit) Append() (warning string, err error) {
	r := e.Redactor
	if r == nil {
		r = redact.FromEnvironment()
	}
	if err := refuseSecret(r, e.Topic, e.Target); err != nil {
		return "", err
	}
	if err := events.ValidateTopic(e.Topic); err != nil {
		return "", &hint.Error{Err: err, Fix: "a topic is dot-separated words without spaces, like build.done"}
	}
	source := e.Source
	if source == "" {
		source = events.SourceAgent
	}
	if source == events.SourceHuman && runfiles.ReservedForRalph(e.Topic) {
		// The loop would reject it, and a person's human.answered would
		// close a question unchecked: `ralph answer` checks the answer.
		return "", &hint.Error{Err: fmt.Errorf("the topic %s is ralph's own: the loop would reject it", e.Topic),
			Fix: "answer a question with `ralph answer`, stop with `ralph stop`; publish a topic of your own, like human.guidance"}
	}
	path, err := e.logPath()
	if err == nil {
		err = checkTarget(e.Target, path)
	}
	if err == nil {
		warning, err = e.checkRunGoing(path)
	}
	if err != nil {
		return "", err
	}
	payload := e.Payload
	if payload == nil {
		payload = json.RawMessage("null")
	}
	ev := events.Event{Topic: e.Topic, Payload: r.JSON(payload), Source: source,
		Target: e.Target, Hat: r.String(e.Hat), Iteration: e.Iteration}
	return fitted(ev, warning, path)
}

// refuseSecret refuses a topic or target that holds a secret value, before
// anything quotes it: ralph writes none to the log, and hidden, neither
// would name a topic or a hat any more. The error quotes them hidden.
func refuseSecret(r *redact.Redactor, topic, target string) error {
	if hidden := r.String(topic); hidden != topic {
		return &hint.Error{Err: fmt.Errorf("the topic %q holds a secret value: ralph writes none to the event log", hidden),
			Fix: "name the event by what happened, like build.done, and put the details in the payload, where ralph hides secret values"}
	}
	if hidden := r.String(target); hidden != target {
		return &hint.Error{Err: fmt.Errorf("the target %q holds a secret value: ralph writes none to the event log", hidden),
			Fix: "--target names one of the run's hats; `ralph hats` lists them"}
	}
	return nil
}

// fitted appends ev to the log at path, its payload cut when it is too long
// for an event line, and adds to warning what was cut.
func fitted(ev events.Event, warning, path string) (string, error) {
	ev, cut, err := events.FitPayload(ev)
	if err != nil {
		return warning, err
	}
	if cut > 0 {
		note := fmt.Sprintf("the payload was %d bytes too long for an event line (at most %d bytes) and was cut in the middle; write a long text to a file and emit its path", cut, events.MaxLineBytes)
		warning = strings.TrimPrefix(warning+"; "+note, "; ")
	}
	return warning, ralphdir.Explain(path, events.AppendTo(path, ev))
}

// Ask appends a question for a person (human.asked), as `ralph ask`
// does, and returns its id.
func (e Emit) Ask(question string, options []string, timeout time.Duration) (id, warning string, err error) {
	line, id, err := runfiles.AskLine(question, options, timeout)
	if err != nil {
		return "", "", err
	}
	e.Topic, e.Payload, e.Target = line.Topic, line.Payload, line.Target
	warning, err = e.Append()
	return id, warning, err
}

// logPath finds the log: File, else the log named in .ralph/current-events.
func (e Emit) logPath() (string, error) {
	if e.File != "" {
		return e.File, nil
	}
	path, err := runfiles.CurrentLog(e.Dir)
	if errors.Is(err, runfiles.ErrNoLog) {
		return "", &hint.Error{Err: errors.New("no event log to append to: no --file, no $RALPH_EVENTS_FILE, and no run in " + e.Dir),
			Fix: "run this inside a loop, from the workspace of a run, or pass --file"}
	}
	return path, err
}

// checkTarget refuses a target that names no hat of the run whose log
// the event goes to, so the agent learns of its typo while it can still fix
// it. A log that does not say which hats its run has is not refused here:
// the loop rejects an unknown target when it reads the event.
func checkTarget(target, logPath string) error {
	if target == "" {
		return nil
	}
	ids, ok, err := runfiles.RunHats(logPath)
	if err != nil || !ok {
		return err
	}
	if err := hats.CheckHatID(target, ids); err != nil {
		return fmt.Errorf("--target: %w", err) // the hint lists the hats
	}
	return nil
}

// checkRunGoing refuses an event for a run that has ended for good: no loop
// would ever read it, and success would tell a person steering the run
// that it was heard. A run that can be resumed reads it when it is.
func (e Emit) checkRunGoing(path string) (string, error) {
	reason, ended, err := runfiles.RunEnded(path)
	if err != nil || !ended {
		return "", err
	}
	switch {
	case reason.Resumable():
		return fmt.Sprintf("the run of %s has ended (%s); the event will be read when the run is resumed with `%s`", path, reason, view.ResumeOf(path)), nil
	case !e.Force:
		return "", &hint.Error{Err: fmt.Errorf("the run of %s has ended (%s): no loop will read this event", path, reason),
			Fix: "start a new run with `ralph loop` and publish to it, or pass --force to append to the ended run's log anyway"}
	}
	return "", nil
}

// AskedSentence is what `ralph ask` tells the agent that asked: the
// question's id, and to end its turn.
func AskedSentence(id string) string {
	return fmt.Sprintf("asked %s; end your turn now: the answer comes to your hat in the next iteration", id)
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/redact"
)

type emitCmd struct {
	Topic   string `arg:"" help:"Event topic, e.g. build.done."`
	Payload string `arg:"" optional:"" help:"Payload text; - reads it from stdin. Omit for none."`
	JSON    bool   `name:"json" help:"The payload is JSON; it is checked and stored as JSON."`
	File    string `placeholder:"FILE" help:"Event log to append to (default: $RALPH_EVENTS_FILE, then the log named in .ralph/current-events)."`
	Target  string `placeholder:"HAT" help:"Deliver the event to this hat only."`
	Force   bool   `help:"Append even to the log of a run that has ended for good (completed or cancelled), which no loop will read."`
}

func (emitCmd) Help() string {
	return `Appends one event to the event log of the running loop. Agents run this from
their shell tool; ralph sets RALPH_EVENTS_FILE, RALPH_ITERATION and RALPH_HAT in
the agent's environment so the event lands in the right log, tagged with the
iteration and hat. The line is written with a single append, so any number of
emits at once never interleave. The values of secret variables (names with KEY,
TOKEN, SECRET or PASSWORD, and those under redact:) become [redacted:NAME].

--target must name one of the run's hats, or ralph (the coordinator), exactly
as configured: an unknown one is refused, with the nearest hat named.

Examples:
  ralph emit build.done "tests: pass, lint: pass"
  ralph emit review.rejected --target builder "The parser ignores empty input."
  ralph emit plan.ready --json '{"steps": 3, "files": ["a.go", "b.go"]}'
  go test ./... 2>&1 | tail -20 | ralph emit build.failed -`
}

func (c *emitCmd) Run(g *globals) error {
	if err := events.ValidateTopic(c.Topic); err != nil {
		return withHint(err, "a topic is dot-separated words without spaces, like build.done")
	}
	payload, err := c.payload(g.stdin)
	if err != nil {
		return err
	}
	return c.appendLine(g, events.Event{Topic: c.Topic, Payload: payload, Source: events.SourceAgent, Target: c.Target})
}

// appendLine appends an agent's line to the run's log: tagged, redacted.
func (c *emitCmd) appendLine(g *globals, ev events.Event) error {
	path, err := c.logPath(g.Dir)
	if err == nil {
		err = checkTarget(c.Target, path)
	}
	if err == nil {
		err = c.checkRunGoing(path, g.stderr)
	}
	if err != nil {
		return err
	}
	ev.Payload, ev.Hat = redact.FromEnvironment().JSON(ev.Payload), os.Getenv("RALPH_HAT")
	ev.Iteration, _ = strconv.Atoi(os.Getenv("RALPH_ITERATION"))
	return events.AppendTo(path, ev)
}

// checkTarget refuses a --target that names no hat of the run whose log
// the event goes to, so the agent learns of its typo while it can still fix
// it. A log that does not say which hats its run has is not refused here:
// the loop rejects an unknown target when it reads the event.
func checkTarget(target, logPath string) error {
	if target == "" {
		return nil
	}
	ids, ok, err := engine.RunHats(logPath)
	if err != nil || !ok {
		return err
	}
	if err := hats.CheckHatID(target, ids); err != nil {
		return fmt.Errorf("--target: %w", err) // the hint lists the hats
	}
	return nil
}

// checkRunGoing refuses an event for a run that has ended for good: no loop
// would ever read it, and exit 0 would tell a person steering the run that
// it was heard. A run that can be resumed reads it when it is.
func (c *emitCmd) checkRunGoing(path string, stderr io.Writer) error {
	reason, ended, err := engine.RunEnded(path)
	if err != nil || !ended {
		return err
	}
	switch {
	case reason.Resumable():
		fmt.Fprintf(stderr, "ralph: warning: the run of %s has ended (%s); the event will be read when the run is resumed with `ralph loop --resume`\n", path, reason)
	case !c.Force:
		return withHint(fmt.Errorf("the run of %s has ended (%s): no loop will read this event", path, reason),
			"start a new run with `ralph loop` and publish to it, or pass --force to append to the ended run's log anyway")
	}
	return nil
}

func (c *emitCmd) payload(stdin io.Reader) (json.RawMessage, error) {
	text := c.Payload
	if text == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read payload from stdin: %w", err)
		}
		text = string(data)
	}
	if !c.JSON {
		if text == "" && c.Payload == "" {
			return json.RawMessage("null"), nil
		}
		return events.StringPayload(text), nil
	}
	if !json.Valid([]byte(text)) {
		return nil, withHint(errors.New("the payload is not valid JSON"),
			`quote it for the shell, e.g. --json '{"ok": true}', or drop --json to send text`)
	}
	return json.RawMessage(strings.TrimSpace(text)), nil
}

// logPath finds the log: --file, then $RALPH_EVENTS_FILE, then the log named
// in .ralph/current-events.
func (c *emitCmd) logPath(dir string) (string, error) {
	if c.File != "" {
		return c.File, nil
	}
	if env := os.Getenv("RALPH_EVENTS_FILE"); env != "" {
		return env, nil
	}
	path, err := engine.CurrentLog(dir)
	if errors.Is(err, engine.ErrNoLog) {
		return "", withHint(errors.New("no event log to append to: no --file, no $RALPH_EVENTS_FILE, and no run in "+dir),
			"run this inside a loop, from the workspace of a run, or pass --file")
	}
	return path, err
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/tail"
	"github.com/ralph-loop/ralph/view/api"
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
iteration and hat. Run by a person (no RALPH_ITERATION set), the event is a
person's: its source is human, and a topic of ralph's own is refused. The line is written with a single append, so any number of
emits at once never interleave. The values of secret variables (names with KEY,
TOKEN, SECRET, PASSWORD and the like, URLs with a password, and those under
redact:) become [redacted:NAME] in the payload, in whatever form they appear
(base64, hex, percent- or JSON-escaped); a topic or target that holds one is
refused.

--target must name one of the run's hats, or ralph (the coordinator), exactly
as configured: an unknown one is refused, with the nearest hat named.

Examples:
  ralph emit build.done "tests: pass, lint: pass"
  ralph emit review.rejected --target builder "The parser ignores empty input."
  ralph emit plan.ready --json '{"steps": 3, "files": ["a.go", "b.go"]}'
  go test ./... 2>&1 | tail -20 | ralph emit build.failed -`
}

func (c *emitCmd) Run(g *globals) error {
	payload, omitted, err := c.payload(g.stdin)
	if err != nil {
		return err
	}
	if omitted > 0 {
		warn(g, fmt.Sprintf("%d bytes in the middle of the payload read from stdin were left out: an event line holds at most %d bytes; write a long text to a file and emit its path", omitted, events.MaxLineBytes))
	}
	e := c.emitter(g)
	e.Topic, e.Payload, e.Target = c.Topic, payload, c.Target
	warning, err := e.Append()
	warn(g, warning)
	return err
}

// emitter appends to the log --file names, else the agent's.
func (c *emitCmd) emitter(g *globals) api.Emit {
	e := api.FromAgentEnv(g.Dir)
	if c.File != "" {
		e.File = c.File
	}
	e.Force = c.Force
	e.Redactor = redactorOf(nil)
	return e
}

// payload is the event's payload, and how many bytes of stdin were left
// out of it.
func (c *emitCmd) payload(stdin io.Reader) (json.RawMessage, int, error) {
	if c.Payload != "-" {
		p, err := api.Payload(c.Payload, c.JSON)
		return p, 0, err
	}
	// Three quarters of a line: JSON escapes (a newline is two bytes) make
	// the text longer in the line, which should not need a second cut.
	data, omitted, err := readPayload(stdin, events.MaxLineBytes*3/4)
	if err != nil {
		return nil, 0, fmt.Errorf("read payload from stdin: %w", err)
	}
	if len(data) == 0 && !c.JSON {
		return events.StringPayload(""), 0, nil // an empty stdin is an empty text
	}
	if c.JSON && omitted > 0 {
		return nil, 0, api.TooLongJSON(len(data) + omitted)
	}
	p, err := api.Payload(data, c.JSON)
	return p, omitted, err
}

// readPayload reads r to its end and keeps at most about limit bytes of it:
// all of it, or its beginning and its end around events.CutNote, as an
// event's payload too long for its line is cut. What is left out is
// counted, not kept: `make 2>&1 | ralph emit build.log -` may be
// gigabytes. (A JSON payload cut so is no longer JSON, which --json then
// says.)
func readPayload(r io.Reader, limit int) (string, int, error) {
	head := make([]byte, limit/2)
	n, err := io.ReadFull(r, head)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return string(head[:n]), 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	rest := tail.New(limit - limit/2)
	if _, err := io.Copy(rest, r); err != nil {
		return "", 0, err
	}
	kept, omitted := rest.Lines()
	if omitted == 0 {
		return string(head) + kept, 0, nil
	}
	return string(head) + events.CutNote(int64(omitted)) + kept, omitted, nil
}

// warn prints a warning a request gave, if any.
func warn(g *globals, warning string) {
	if warning != "" {
		fmt.Fprintln(g.stderr, "ralph: warning: "+warning)
	}
}

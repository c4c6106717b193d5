package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view/api"
)

// tools are ralph's tools for the workspace dir; redactor hides secret
// values in what they read of the logs and in the events they write.
type tools struct {
	dir      string
	redactor *redact.Redactor
}

func (t tools) add(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "status", Description: statusHelp, OutputSchema: schemaOf[api.Status](),
		Annotations: readOnly("What runs here")}, t.status)
	sdk.AddTool(s, &sdk.Tool{Name: "events", Description: eventsHelp, InputSchema: eventQuerySchema(),
		OutputSchema: schemaOf[EventsResult](), Annotations: readOnly("The run's events")}, t.events)
	sdk.AddTool(s, &sdk.Tool{Name: "emit", Description: emitHelp, Annotations: steers("Publish an event", false)}, t.emit)
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: askHelp, Annotations: steers("Ask a person", false)}, t.ask)
	sdk.AddTool(s, &sdk.Tool{Name: "answer", Description: answerHelp, Annotations: steers("Answer the pending question", false)}, t.answer)
	sdk.AddTool(s, &sdk.Tool{Name: "guide", Description: guideHelp, Annotations: steers("Guide the run", false)}, t.guide)
	sdk.AddTool(s, &sdk.Tool{Name: "stop", Description: stopHelp, Annotations: steers("Stop the run", true)}, t.stop)
	sdk.AddTool(s, &sdk.Tool{Name: "pause", Description: pauseHelp, Annotations: steers("Pause the autopilot", false)}, t.pause)
	sdk.AddTool(s, &sdk.Tool{Name: "resume", Description: resumeHelp, Annotations: steers("Resume the autopilot", false)}, t.resume)
}

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: new(false)}
}

func steers(title string, destructive bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: new(destructive), OpenWorldHint: new(false)}
}

// Message is what a request answered, in the command line's words.
type Message struct {
	Message string `json:"message" jsonschema:"what ralph answered, as the command line prints it"`
	// Warning says the request was done but may not have the effect meant.
	Warning string `json:"warning,omitempty" jsonschema:"a warning, e.g. that the run has ended and reads the event when resumed"`
}

// said is the result of a request that answered sentence or failed.
func said(sentence, warning string, err error) (*sdk.CallToolResult, Message, error) {
	if err != nil {
		return failed[Message](err)
	}
	out := Message{Message: sentence, Warning: warning}
	if warning != "" {
		sentence += "\nralph: warning: " + warning
	}
	return text(sentence, out)
}

// StatusInput is the status tool's arguments.
type StatusInput struct {
	Last *int `json:"last,omitempty" jsonschema:"how many of a loop's recent events to include (default 5, 0 for none)"`
}

const statusHelp = "What runs in this workspace: a loop (kind loop: running or not, its pid, run id, iteration n/max, current hat and phase, elapsed time, cost, tokens, recent events, the question it waits on, how its last run ended) " +
	"or an autopilot and its slots (kind autopilot: the tasks running, started, completed, failed and pending). " +
	"The text is what `ralph status --json` (a loop) or `ralph autopilot status --json` (an autopilot) prints. " +
	"Use it first, to see what runs before steering it, and to find the id of a pending question."

func (t tools) status(ctx context.Context, _ *sdk.CallToolRequest, in StatusInput) (*sdk.CallToolResult, api.Status, error) {
	recent := 5
	if in.Last != nil {
		recent = max(*in.Last, 0)
	}
	s, err := api.ReadStatus(ctx, t.dir, recent, time.Now(), t.redactor)
	if err != nil {
		return failed[api.Status](err)
	}
	var shown any
	switch s.Kind {
	case api.KindLoop:
		shown = s.Loop
	case api.KindAutopilot:
		shown = s.Autopilot
	case api.KindNone:
		shown = s // nothing has run: the kind says so
	}
	data, err := json.MarshalIndent(shown, "", "  ")
	if err != nil {
		return failed[api.Status](err)
	}
	return text(string(data)+"\n", s)
}

// EventsResult is the events tool's structured output.
type EventsResult struct {
	// Log is the log read, relative to the workspace when inside it.
	Log    string     `json:"log" jsonschema:"the event log read"`
	Events []api.Line `json:"events" jsonschema:"the events, in log order: offset and next are where each line starts and where the next does; event is the line as written"`
	// Malformed counts the log's lines that are not events, left out.
	Malformed int `json:"malformed" jsonschema:"how many lines of the log are not JSON events and were left out"`
}

const eventsHelp = "The events of the current run's log (or of an autopilot task's loop, the autopilot's own log, or an earlier run): what ralph and the agents published, how each event was routed or rejected, how each iteration ended, with its hat, tokens and cost. " +
	"The filters are `ralph events`' flags; the text is the JSON lines `ralph events --json` prints with them, one event a line. " +
	"Use it to see what happened: what the last iteration did, why an event was rejected, what a hat handed off."

// eventFieldHelp describes api.EventQuery's fields, the tool's arguments.
var eventFieldHelp = map[string]string{
	"topic":     "only events whose topic matches this pattern: build.done, build.*, *.done",
	"hat":       "only events of this hat (published by it, or ralph's lines about its iterations)",
	"iteration": "only events of this iteration (from 1)",
	"since":     "only events from the last duration (10m, 2h) or since a time (2026-11-22T10:00:00Z)",
	"last":      "only the last N matching events",
	"task":      "read the loop log of this autopilot task instead of the current run's",
	"autopilot": "read the autopilot's own log (its tasks starting, merging, failing) instead of a run's",
	"run":       "read an earlier run's log: its id or a unique prefix",
}

// eventQuerySchema is api.EventQuery's schema with each field described.
func eventQuerySchema() *jsonschema.Schema {
	s := schemaOf[api.EventQuery]()
	for name, p := range s.Properties {
		p.Description = eventFieldHelp[name]
	}
	return s
}

func (t tools) events(ctx context.Context, _ *sdk.CallToolRequest, q api.EventQuery) (*sdk.CallToolResult, EventsResult, error) {
	lines, malformed, err := api.Events(ctx, t.dir, q, time.Now(), t.redactor)
	if err != nil {
		return failed[EventsResult](err)
	}
	path, err := q.LogPath(t.dir)
	if err != nil {
		return failed[EventsResult](err)
	}
	if rel, err := filepath.Rel(t.dir, path); err == nil && filepath.IsLocal(rel) {
		path = rel
	}
	var b strings.Builder
	for _, l := range lines {
		b.Write(l.Event)
		b.WriteByte('\n')
	}
	if lines == nil {
		lines = []api.Line{}
	}
	return text(b.String(), EventsResult{Log: path, Events: lines, Malformed: malformed})
}

// EmitInput is the emit tool's arguments, `ralph emit`'s.
type EmitInput struct {
	Topic   string `json:"topic" jsonschema:"the event's topic, dot-separated words: build.done, review.rejected; LOOP_COMPLETE claims the whole task is done"`
	Payload string `json:"payload,omitempty" jsonschema:"the event's payload: text, or JSON with json set"`
	JSON    bool   `json:"json,omitempty" jsonschema:"the payload is JSON; it is checked and stored as JSON"`
	Target  string `json:"target,omitempty" jsonschema:"deliver the event to this hat only"`
}

const emitHelp = "Publish an event to the running loop's event log, as `ralph emit` does: how a hat hands its work on (build.done, review.rejected) and how the loop learns the task is done (LOOP_COMPLETE). " +
	"Launched by ralph, it publishes into your own run, tagged with your hat and iteration; the next iteration routes it to the hats it triggers. " +
	"Use it at the end of your turn, once, with the topic your hat's instructions name."

func (t tools) emit(_ context.Context, _ *sdk.CallToolRequest, in EmitInput) (*sdk.CallToolResult, Message, error) {
	payload, err := api.Payload(in.Payload, in.JSON)
	if err != nil {
		return failed[Message](err)
	}
	e := api.FromAgentEnv(t.dir)
	e.Topic, e.Payload, e.Target, e.Redactor = in.Topic, payload, in.Target, t.redactor
	warning, err := e.Append()
	sentence := "published " + in.Topic
	if in.Target != "" {
		sentence += " to " + in.Target
	}
	return said(sentence, warning, err)
}

// AskInput is the ask tool's arguments, `ralph ask`'s.
type AskInput struct {
	Question string   `json:"question" jsonschema:"the question, for a person"`
	Options  []string `json:"options,omitempty" jsonschema:"choices to offer"`
	Timeout  string   `json:"timeout,omitempty" jsonschema:"how long the run waits for the answer, a duration like 30m (default: the config's human.timeout_seconds)"`
}

// Asked is the ask tool's structured output.
type Asked struct {
	ID      string `json:"id" jsonschema:"the question's id, which its answer names"`
	Message string `json:"message" jsonschema:"what ralph answered, as ralph ask prints it"`
	Warning string `json:"warning,omitempty" jsonschema:"a warning, e.g. that the run has ended and reads the question when resumed"`
}

const askHelp = "Ask a person a question, as `ralph ask` does: once your iteration ends, the run waits for the answer (`ralph answer`, or the answer tool), which comes to your hat in the next iteration. " +
	"Use it when only a person can decide (a product choice, a credential, a risky step), then end your turn."

func (t tools) ask(_ context.Context, _ *sdk.CallToolRequest, in AskInput) (*sdk.CallToolResult, Asked, error) {
	var timeout time.Duration
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d < 0 {
			return failed[Asked](&hint.Error{Err: fmt.Errorf("timeout %q is not a duration", in.Timeout), Fix: "give a duration like 30m or 1h30m, or leave it out for the config's human.timeout_seconds"})
		}
		timeout = d
	}
	e := api.FromAgentEnv(t.dir)
	e.Redactor = t.redactor
	id, warning, err := e.Ask(in.Question, in.Options, timeout)
	if err != nil {
		return failed[Asked](err)
	}
	res, msg, _ := said(api.AskedSentence(id), warning, nil)
	return res, Asked{ID: id, Message: msg.Message, Warning: msg.Warning}, nil
}

// AnswerInput is the answer tool's arguments, `ralph answer`'s.
type AnswerInput struct {
	Text string `json:"text" jsonschema:"the answer"`
	ID   string `json:"id,omitempty" jsonschema:"the question's id (the status tool shows it); leave it out to answer the pending one"`
	Task string `json:"task,omitempty" jsonschema:"the autopilot task whose loop asked; leave it out for this workspace's own loop"`
}

const answerHelp = "Answer the question a run waits on, as `ralph answer` does; the run goes on with its next iteration, and the asking hat gets the answer. " +
	"Use it when the status tool shows a question waiting (waiting_for_human) and you are the one to decide."

func (t tools) answer(_ context.Context, _ *sdk.CallToolRequest, in AnswerInput) (*sdk.CallToolResult, Message, error) {
	sentence, err := api.Answer(t.dir, in.Task, in.ID, in.Text, "mcp")
	return said(sentence, "", err)
}

// StopInput is the stop tool's arguments.
type StopInput struct {
	Now bool `json:"now,omitempty" jsonschema:"interrupt the running agents now instead of waiting for them; the run stays resumable"`
}

const stopHelp = "Stop what runs here, as `ralph stop` (a loop: before its next iteration) or `ralph autopilot stop` (an autopilot: once its running tasks finish) do; with now, at once. " +
	"The run ends resumable (`ralph loop --resume`, `ralph chain resume` for a chain's step, `ralph autopilot`). Use it when a person asks for it or the run goes wrong; an agent whose task is done emits LOOP_COMPLETE instead."

func (t tools) stop(_ context.Context, _ *sdk.CallToolRequest, in StopInput) (*sdk.CallToolResult, Message, error) {
	sentence, err := api.Stop(t.dir, in.Now)
	return said(sentence, "", err)
}

const pauseHelp = "Pause the autopilot running here, as `ralph autopilot pause` does: it starts no new task; the running ones go on. Undo with resume."

func (t tools) pause(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, Message, error) {
	sentence, err := api.Pause(t.dir)
	return said(sentence, "", err)
}

const resumeHelp = "Resume the autopilot running here after a pause, as `ralph autopilot resume` does: it starts new tasks again."

func (t tools) resume(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, Message, error) {
	sentence, err := api.Resume(t.dir)
	return said(sentence, "", err)
}

// schemaOf is T's JSON schema, where a json.RawMessage (an event as
// written, a payload) is any JSON value rather than bytes.
func schemaOf[T any]() *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeFor[T](), &jsonschema.ForOptions{
		TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}},
	})
	if err != nil {
		panic(fmt.Sprintf("schema of %v: %v", reflect.TypeFor[T](), err)) // a type of this package's: a bug
	}
	return s
}

// GuideInput is the guide tool's arguments.
type GuideInput struct {
	Text string `json:"text" jsonschema:"what the run should know or do differently"`
	Task string `json:"task,omitempty" jsonschema:"guide the loop of this autopilot task (its id or slot) instead of the workspace's"`
}

const guideHelp = "Steer the running loop, as `ralph guide` does: publish a person's guidance (human.guidance), which the next iteration's prompt carries, once, whatever its hat. " +
	"Use it to correct the run's course without stopping it: a constraint it missed, a direction to take, a dead end to leave."

func (t tools) guide(_ context.Context, _ *sdk.CallToolRequest, in GuideInput) (*sdk.CallToolResult, Message, error) {
	sentence, err := api.Guide(t.dir, in.Task, in.Text)
	return said(sentence, "", err)
}

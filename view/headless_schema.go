package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// HeadlessSchemaVersion is the version of the --headless stream's schema
// (docs/headless.schema.json). An event or a field may be added without
// raising it; it is raised when one changes meaning or goes away (ralph
// capabilities states it).
const HeadlessSchemaVersion = 1

// HeadlessSchemaURL is the published copy of the stream's schema.
const HeadlessSchemaURL = "https://raw.githubusercontent.com/ralph-loop/ralph/main/docs/headless.schema.json"

// headlessEvents is every event of the --headless stream, in the order a
// run may write them, with the type of its body: the schema is made from
// these, so it cannot drift from what Headless writes.
var headlessEvents = []struct {
	name, doc string
	body      any
	// only narrows fields of a body two events share, or that one event
	// has only some values of: property name → the values it may have.
	only map[string][]any
}{
	{"started", "The run started or resumed.", headStarted{}, nil},
	{"iteration", "An iteration started.", headIteration{}, nil},
	{"tool", "The agent read or wrote a file (type read, write, with its path) or ran a command (type bash).", headTool{}, map[string][]any{"type": {"read", "write", "bash"}}},
	{"tool_other", "The agent used a tool that is not a read, a write or a command (type other).", headTool{}, map[string][]any{"type": {"other"}}},
	{"commit", "A commit appeared in the workspace during an iteration.", headCommit{}, nil},
	{"event", "An event the agent published was accepted and routed.", headEvent{}, nil},
	{"rejected", "An event the agent published was not accepted.", headRejected{}, nil},
	{"task_complete", "A SPEC box became checked; index counts the boxes from 0, in file order.", headTaskComplete{}, nil},
	{"waiting_for_human", "The agent asked a person a question; the run waits for the answer.", runfiles.Question{}, nil},
	{"human_answered", "The wait for a person is over, answered or timed out.", headAnswered{}, nil},
	{"iteration_done", "An iteration's agent exited.", headIterationDone{}, nil},
	{"rate_limited", "The agent hit a rate limit; the iteration repeats after the wait.", headRateLimited{}, nil},
	{"paced", "The next iteration would exceed a pacing budget (window: tokens_per_hour, tokens_per_day, cost_per_hour, cost_per_day); the run waits until the window allows it (until), then goes on. used, budget and estimate are tokens, or US dollars for the cost windows; oversize: the estimate alone is over the budget, so it waits for an empty window.", headPaced{}, nil},
	{"backend_switched", "The run goes on with another backend of its chain (cli.fallback): the agent hit a rate limit further away than fallback_after_seconds or failed for the provider's sake, and the iteration repeats on the next backend; or an earlier backend is available again.", headBackendSwitched{}, nil},
	{"wave", "An iteration runs a wave (a hat with concurrency: one worker per event of a wave, several at once): sent when it starts (done 0) and as each worker ends (failed counts those that failed, missed the wave's timeout or were stopped by the run's limit).", headWave{}, nil},
	{"warning", "Something the run went on past.", headWarning{}, nil},
	{"stuck", "Iterations stopped making progress; the run ends (ended, reason stuck, exit 1).", headStuck{}, nil},
	{"complete", "The run completed: every task is done (exit 0). Ends the stream.", headComplete{},
		map[string][]any{"reason": {string(runfiles.ReasonCompleted)}, "exit_code": {exitcode.OK}}},
	{"ended", "The run ended without completing: reason and exit_code say how (a limit, stuck, stopped, interrupted…). Ends the stream.", headComplete{},
		map[string][]any{"reason": endedReasons(), "exit_code": {exitcode.OK, exitcode.Failure, exitcode.Limit, exitcode.Interrupted}}},
	{"failed", "ralph could not run the loop, or the run hit an error it cannot recover from (exit 3). Ends the stream.", headFailed{}, nil},
}

// headlessEnds are the events one of which ends every stream.
var headlessEnds = []string{"complete", "ended", "failed"}

var headlessSchema = sync.OnceValues(func() ([]byte, error) {
	root := &jsonschema.Schema{
		Schema: "https://json-schema.org/draft/2020-12/schema",
		ID:     HeadlessSchemaURL,
		Title:  "ralph loop --headless",
		Description: "One line of the stream `ralph loop --headless` writes on stdout: a JSON object whose first fields are " +
			"event (its kind), ts and timestamp (the same RFC 3339 UTC time). Exactly one complete, ended or failed line ends the stream.",
		Defs: map[string]*jsonschema.Schema{},
	}
	for _, e := range headlessEvents {
		s, err := jsonschema.ForType(reflect.TypeOf(e.body), &jsonschema.ForOptions{TypeSchemas: anyJSON})
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", e.name, err)
		}
		for prop, values := range e.only {
			s.Properties[prop].Enum = values
		}
		root.Defs[e.name] = withHead(s, e.name, e.doc)
		root.OneOf = append(root.OneOf, &jsonschema.Schema{Ref: "#/$defs/" + e.name})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
})

// anyJSON: an event's payload is whatever JSON the agent published.
var anyJSON = map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}

// endedReasons are the reasons of a run that ended neither completed nor
// as fatal.
func endedReasons() []any {
	var out []any
	for _, r := range runfiles.Reasons() {
		if r != runfiles.ReasonCompleted && r != runfiles.ReasonFatal {
			out = append(out, string(r))
		}
	}
	return out
}

// withHead adds the fields every line starts with to an event's schema.
func withHead(s *jsonschema.Schema, name, doc string) *jsonschema.Schema {
	var event any = name
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Description = doc
	s.Properties["event"] = &jsonschema.Schema{Const: &event}
	at := "when the line was written, RFC 3339 in UTC with nanoseconds"
	s.Properties["ts"] = &jsonschema.Schema{Type: "string", Format: "date-time", Description: at}
	s.Properties["timestamp"] = &jsonschema.Schema{Type: "string", Format: "date-time", Description: "the same time as ts"}
	s.PropertyOrder = append([]string{"event", "ts", "timestamp"}, s.PropertyOrder...)
	s.Required = append([]string{"event", "ts", "timestamp"}, s.Required...)
	return s
}

// HeadlessSchema is the JSON Schema (draft 2020-12) of a line of the
// --headless stream, made from the types Headless writes.
func HeadlessSchema() []byte {
	b, err := headlessSchema()
	if err != nil {
		panic("view: the headless stream's schema: " + err.Error()) // only plain structs, strings and numbers
	}
	return b
}

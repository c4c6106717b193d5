package events

import (
	"bytes"
	"encoding/json"
	"time"
)

// Sources of an event, recorded in its "source" field.
const (
	SourceAgent = "agent" // written by the agent with `ralph emit`
	SourceTag   = "tag"   // found as an <event> tag in the agent's final text
	SourceRalph = "ralph" // written by ralph itself (iteration.started, loop.terminate, …)
)

// Event is one line of the event log.
//
// Payload holds the raw JSON of the "payload" field: a JSON string, an
// object, or null. Keeping it raw means a line that is read and written back
// renders the same, whatever its payload was.
type Event struct {
	TS        time.Time       `json:"ts"`
	Topic     string          `json:"topic"`
	Payload   json.RawMessage `json:"payload"`
	Iteration int             `json:"iteration,omitempty"`
	Hat       string          `json:"hat,omitempty"`
	Source    string          `json:"source,omitempty"`
	Target    string          `json:"target,omitempty"`
}

// StringPayload encodes s as a JSON string payload.
func StringPayload(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// ObjectPayload encodes v (a struct or map) as a JSON payload.
func ObjectPayload(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// PayloadText is the payload as a person reads it: a string payload
// unquoted, null as the empty string, anything else as its JSON text.
func (e Event) PayloadText() string {
	p := bytes.TrimSpace(e.Payload)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return ""
	}
	if p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return s
		}
	}
	return string(p)
}

// FirstLine is the first line of the payload text, used to recognise the
// same blocked event coming back.
func (e Event) FirstLine() string {
	t := e.PayloadText()
	if i := bytes.IndexByte([]byte(t), '\n'); i >= 0 {
		return t[:i]
	}
	return t
}

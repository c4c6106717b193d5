package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatVersion is the version of the event log's line format (an [Event]
// per line: ts, topic, payload, iteration, hat, source, target, and, on the
// lines of a wave, wave_id, wave_index and wave_total; see [Wave]). A field
// may be added without raising it; it is raised when a field changes
// meaning or goes away, so that a reader of logs (ralph capabilities
// states it) can tell.
const FormatVersion = 1

// Sources of an event, recorded in its "source" field.
const (
	SourceAgent = "agent" // written by the agent with `ralph emit`
	SourceTag   = "tag"   // found as an <event> tag in the agent's final text
	SourceRalph = "ralph" // written by ralph itself (iteration.started, loop.terminate, …)
	SourceHuman = "human" // written for a person: `ralph answer`, a hook, the TUI
)

// Event is one line of the event log.
//
// Payload holds the raw JSON of the "payload" field: usually a JSON string,
// an object, or null (nil), though any JSON value is kept. Keeping it raw
// means a line that is read and written back renders the same, whatever its
// payload was.
type Event struct {
	TS        time.Time       `json:"ts"`
	Topic     string          `json:"topic"`
	Payload   json.RawMessage `json:"payload"`
	Iteration int             `json:"iteration,omitempty"`
	Hat       string          `json:"hat,omitempty"`
	Source    string          `json:"source,omitempty"`
	Target    string          `json:"target,omitempty"`
	// Wave is set on the events of a wave: those `ralph wave emit`
	// dispatched, and those its workers published. Its keys sit beside
	// the others on the line, as ralph-orchestrator writes them.
	*Wave
}

// Wave places an event in a wave: N events one hat handles in parallel,
// one worker each. A dispatched event is the WaveIndex-th of the wave's
// WaveTotal; a result carries the WaveIndex of the worker that published
// it.
//
// An event outside a wave has none of the keys, which is why each may be
// left out; a wave_index left out is 0.
type Wave struct {
	WaveID    string `json:"wave_id,omitempty"`
	WaveIndex int    `json:"wave_index,omitzero"`
	WaveTotal int    `json:"wave_total,omitempty"`
}

// InWave reports whether ev belongs to a wave.
func (e Event) InWave() bool { return e.Wave != nil && e.WaveID != "" }

// Published reports whether ev is one an agent published (with `ralph emit`
// or as a tag) rather than one of ralph's own lines. The log records such an
// event whatever its topic, as long as it has one: the log is the record of
// what the agent said, and the reader of the line judges it, as it judges a
// line the agent appended to the file itself. Refusing it instead would lose
// the agent's mistake, and ralph could not tell the agent what it was.
func (e Event) Published() bool {
	return e.Source == SourceAgent || e.Source == SourceTag
}

// StringPayload encodes s as a JSON string payload.
func StringPayload(s string) json.RawMessage {
	b, _ := marshalPayload(s) // a string always marshals
	return b
}

// ObjectPayload encodes v (a struct or map) as a JSON payload, or null if v
// cannot be encoded.
func ObjectPayload(v any) json.RawMessage {
	b, err := marshalPayload(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// marshalPayload is json.Marshal without HTML escaping, so payloads that
// quote tags or shell commands (<, >, &) stay readable in the log.
func marshalPayload(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// PayloadText is the payload as a person reads it: a string payload
// unquoted, null as the empty string, anything else as its JSON text.
func (e Event) PayloadText() string {
	p := bytes.TrimSpace(e.Payload)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return ""
	}
	if s, ok := plainString(p); ok {
		return s
	}
	if p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return s
		}
	}
	return string(p)
}

// plainString is a JSON string that decodes to its own bytes: valid UTF-8
// (the decoder replaces bad bytes) with no escape, quote or control
// character. Most payloads are, and skip the decoder.
func plainString(p []byte) (string, bool) {
	if len(p) < 2 || p[0] != '"' || p[len(p)-1] != '"' {
		return "", false
	}
	inner := p[1 : len(p)-1]
	ascii := true
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

// FirstLine is the first line of the payload text, used to recognise the
// same blocked event coming back.
func (e Event) FirstLine() string {
	t := e.PayloadText()
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		return t[:i]
	}
	return t
}

// UnmarshalJSON decodes one event object leniently, so that lines written by
// other Ralph implementations load: a missing, empty or unparseable "ts"
// leaves TS zero instead of failing the line, and any RFC 3339 form is
// accepted (lower-case 't'/'z', a space for 'T'). The payload is compacted,
// and null or a missing payload become a nil Payload, so an event that is
// read and written back renders the same. It does not require a topic;
// ParseLine does.
func (e *Event) UnmarshalJSON(data []byte) error {
	// eventFields has Event's fields but not its methods, so decoding into
	// it does not recurse back here.
	type eventFields Event
	var w struct {
		eventFields
		// These shadow the embedded fields of the same JSON name.
		TS      json.RawMessage `json:"ts"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	payload, err := normalizePayload(w.Payload)
	if err != nil {
		return err
	}
	*e = Event(w.eventFields)
	e.TS = parseTS(w.TS)
	e.Payload = payload
	return nil
}

// normalizePayload compacts raw JSON and maps null to nil.
func normalizePayload(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw, nil // already compact; raw is a copy, so it may be kept
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return buf.Bytes(), nil
}

// jsonString decodes raw if it is a JSON string. Timestamps rarely hold
// escapes, so those skip the decoder.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// parseTS reads a JSON timestamp that may be any RFC 3339 form, or zero when
// it is absent or not a time.
func parseTS(raw json.RawMessage) time.Time {
	s, ok := jsonString(raw)
	if !ok {
		return time.Time{}
	}
	s = strings.TrimSpace(s)
	if len(s) > len("2006-01-02") && (s[10] == ' ' || s[10] == 't') {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

package view

import (
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/redact"
)

// Readers hide secret values too. The engine keeps them out of what it
// writes, but an agent may append a line to the log by other means than
// `ralph emit`, and only that file holds it as written: everything that
// shows a log's lines (ralph events, ralph watch, and through view/api
// ralph serve and ralph mcp) shows them through the reader's Redactor.

// RedactRecord is rec as a reader shows it: its line with r's secret
// values hidden, still valid JSON when it was, and its event decoded from
// that line. hid says it differs from rec; rec is returned as it is when
// it holds no secret. Its Offset stays where the line starts in the log
// (positions are the file's, whatever is shown); its End is not the
// log's: take it from rec.
func RedactRecord(r *redact.Redactor, rec events.Record) (shown events.Record, hid bool) {
	line := r.Line(rec.Line)
	if sameBytes(line, rec.Line) {
		return rec, false
	}
	shown = events.Record{Offset: rec.Offset, Line: line}
	shown.Event, shown.Err = events.ParseLine(line)
	return shown, true
}

// sameBytes reports whether a and b are the same bytes of memory, as
// redact returns what it did not change.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// RedactEvent is ev with r's secret values hidden in what a line written
// by hand may hold them in: its payload (still valid JSON), topic, target
// and hat.
func RedactEvent(r *redact.Redactor, ev events.Event) events.Event {
	if r.Empty() {
		return ev
	}
	ev.Payload = r.JSON(ev.Payload)
	ev.Topic, ev.Target, ev.Hat = r.String(ev.Topic), r.String(ev.Target), r.String(ev.Hat)
	return ev
}

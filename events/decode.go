package events

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// decodeFast decodes the lines ralph and its agents write, several times
// faster than encoding/json, which reflects on every field of every line.
// It answers only when it is sure to agree with ParseLine's encoding/json
// path: a JSON object, valid throughout, whose known keys are spelled
// exactly, whose string fields need no unescaping and whose iteration is a
// plain integer, with a non-empty topic. Anything else (an escape in a
// topic, a key in another case, a malformed line) returns false, and the
// caller decodes with encoding/json, so its result and error stay the
// reference. FuzzDecodeFast holds the two to agreement.
func decodeFast(line []byte, names interner) (Event, bool) {
	d := fastDecoder{data: line, names: names}
	return d.event()
}

// event is decodeFast on d's data.
func (d *fastDecoder) event() (Event, bool) {
	ev, ok := d.object()
	if !ok || ev.Topic == "" {
		return Event{}, false
	}
	return ev, true
}

// fastDecoder walks one line; ok false anywhere means "ask encoding/json".
type fastDecoder struct {
	data  []byte
	i     int
	names interner // may be nil
	// fieldsFor, when set, gives the fields to fill from an object payload
	// as it is read, by the topic read before it (see
	// Decoder.ParseLineFields); fieldsTopic is that topic, payloads counts
	// the payload keys and fieldsOK says the last one filled its fields.
	fieldsFor   func(topic string) []Field
	fieldsTopic string
	payloads    int
	fieldsOK    bool
	// sawSpace is set by skipSpace when it skips anything.
	sawSpace bool
}

// interner shares the strings a log repeats on every line (topics, hats,
// sources) instead of allocating each again: a scan of a million lines
// holds a few dozen distinct ones.
type interner map[string]string

// maxInterned bounds an interner, so a log of all-different topics costs
// what it would without one.
const maxInterned = 1024

func (in interner) get(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

// maxFastDepth bounds the nesting decodeFast follows; deeper values go to
// encoding/json, which has its own (larger) limit and error.
const maxFastDepth = 256

func (d *fastDecoder) object() (Event, bool) {
	var ev Event
	var ts, payload []byte
	payloadSpaced := false
	d.skipSpace()
	if !d.consume('{') {
		return ev, false
	}
	d.skipSpace()
	if d.consume('}') {
		return ev, d.atEnd()
	}
	for {
		key, ok := d.key()
		if !ok {
			return ev, false
		}
		d.skipSpace()
		if !d.consume(':') {
			return ev, false
		}
		d.skipSpace()
		switch string(key) {
		case "ts":
			start := d.i
			if _, ok := d.value(0); !ok {
				return ev, false
			}
			ts = d.data[start:d.i]
		case "payload":
			start := d.i
			spaced, ok := d.payloadValue(ev.Topic)
			if !ok {
				return ev, false
			}
			payload, payloadSpaced = d.data[start:d.i], spaced
		case "topic":
			ok = d.stringField(&ev.Topic)
		case "hat":
			ok = d.stringField(&ev.Hat)
		case "source":
			ok = d.stringField(&ev.Source)
		case "target":
			ok = d.stringField(&ev.Target)
		case "iteration":
			ok = d.intField(&ev.Iteration)
		case "wave_id", "wave_index", "wave_total":
			return ev, false // rare: encoding/json fills the Wave
		default:
			if foldsToField(key) {
				return ev, false // encoding/json matches keys case-insensitively
			}
			_, ok = d.value(0)
		}
		if !ok {
			return ev, false
		}
		d.skipSpace()
		if d.consume('}') {
			break
		}
		if !d.consume(',') {
			return ev, false
		}
		d.skipSpace()
	}
	if !d.atEnd() {
		return ev, false
	}
	ev.TS = parseTS(ts)
	ev.Payload = fastPayload(payload, payloadSpaced, d.fieldsFor != nil)
	return ev, true
}

// payloadValue is value for the payload, filling the fields fieldsFor
// gives for topic from it on the way when it is an object DecodeFields is
// sure of: a caller that wants a few of its fields then need not read it
// again.
func (d *fastDecoder) payloadValue(topic string) (spaced, ok bool) {
	d.payloads++
	d.fieldsOK = false
	if d.fieldsFor == nil || d.i >= len(d.data) || d.data[d.i] != '{' {
		return d.value(0)
	}
	fields := d.fieldsFor(topic)
	if fields == nil {
		return d.value(0)
	}
	start := d.i
	d.sawSpace = false
	if d.fields(fields) {
		// Whitespace between tokens is skipped by skipSpace, which the
		// fields' decoding calls between every two.
		d.fieldsOK, d.fieldsTopic = true, topic
		return d.sawSpace, true
	}
	d.i = start // the value's validity is value's to say
	return d.value(0)
}

// fastPayload is normalizePayload for a value already known to be valid:
// only one with whitespace between its tokens needs compacting. borrow
// returns a compact one as the line's own bytes rather than a copy.
func fastPayload(raw []byte, spaced, borrow bool) json.RawMessage {
	if raw == nil || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if !spaced {
		if borrow {
			return raw[:len(raw):len(raw)]
		}
		return bytes.Clone(raw)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return bytes.Clone(raw) // unreachable: value() checked it
	}
	return buf.Bytes()
}

// fieldNames are Event's JSON keys.
var fieldNames = []string{"ts", "topic", "payload", "iteration", "hat", "source", "target", "wave_id", "wave_index", "wave_total"}

// foldsToField reports whether an unknown key is one of Event's in another
// case, which encoding/json would decode into the field. key is ASCII.
func foldsToField(key []byte) bool {
	for _, name := range fieldNames {
		if len(key) == len(name) && bytes.EqualFold(key, []byte(name)) {
			return true
		}
	}
	return false
}

func (d *fastDecoder) atEnd() bool {
	d.skipSpace()
	return d.i == len(d.data)
}

func (d *fastDecoder) consume(c byte) bool {
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
			d.sawSpace = true
		default:
			return
		}
	}
}

// key reads an object key that is plain ASCII: an escape or a non-ASCII
// byte could fold to one of Event's keys, which encoding/json would match.
func (d *fastDecoder) key() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return d.data[start : d.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// stringField decodes a string that needs no unescaping and is valid UTF-8
// (encoding/json replaces bad bytes), or null, which leaves *dst as it is.
func (d *fastDecoder) stringField(dst *string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.plainString()
	if ok {
		*dst = d.names.get(s)
	}
	return ok
}

// plainString reads a string that needs no unescaping and is valid UTF-8,
// and returns its contents, borrowed from data (not nil, even when empty).
func (d *fastDecoder) plainString() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start, ascii := d.i, true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			s := d.data[start:d.i:d.i]
			d.i++
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return nil, false
}

// intField decodes a JSON integer that fits an int, or null, which leaves
// *dst as it is. A fraction or an exponent is a type error to encoding/json.
func (d *fastDecoder) intField(dst *int) bool {
	if d.literal("null") {
		return true
	}
	neg := d.consume('-')
	digits := d.i
	n := 0
	for d.i < len(d.data) && isDigit(d.data[d.i]) {
		n = n*10 + int(d.data[d.i]-'0')
		d.i++
	}
	count := d.i - digits
	// 18 digits always fit an int64; longer ones go to encoding/json,
	// which checks the range. A leading zero is invalid JSON.
	if count == 0 || count > 18 || (count > 1 && d.data[digits] == '0') || intSize < 64 {
		return false
	}
	if d.i < len(d.data) {
		switch d.data[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// intSize is the size of int in bits.
const intSize = 32 << (^uint(0) >> 63)

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (d *fastDecoder) literal(word string) bool {
	if bytes.HasPrefix(d.data[d.i:], []byte(word)) {
		d.i += len(word)
		return true
	}
	return false
}

// value checks the JSON value at d.i and moves past it. spaced reports
// whitespace between its tokens, which compacting would remove.
func (d *fastDecoder) value(depth int) (spaced, ok bool) {
	if d.i >= len(d.data) || depth > maxFastDepth {
		return false, false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		return false, d.skipString()
	case c == '{':
		return d.container('}', depth)
	case c == '[':
		return d.container(']', depth)
	case c == '-' || isDigit(c):
		return false, d.number()
	default:
		return false, d.literal("true") || d.literal("false") || d.literal("null")
	}
}

// container checks an object or an array (close is '}' or ']').
func (d *fastDecoder) container(close byte, depth int) (spaced, ok bool) {
	d.i++ // the opening bracket
	spaced = d.spaces()
	if d.consume(close) {
		return spaced, true
	}
	for {
		if close == '}' {
			if !d.skipString() {
				return false, false
			}
			spaced = d.spaces() || spaced
			if !d.consume(':') {
				return false, false
			}
			spaced = d.spaces() || spaced
		}
		inner, ok := d.value(depth + 1)
		if !ok {
			return false, false
		}
		spaced = d.spaces() || inner || spaced
		if d.consume(close) {
			return spaced, true
		}
		if !d.consume(',') {
			return false, false
		}
		spaced = d.spaces() || spaced
	}
}

// spaces skips whitespace and reports whether there was any.
func (d *fastDecoder) spaces() bool {
	start := d.i
	d.skipSpace()
	return d.i > start
}

// skipString checks a JSON string: escapes must be JSON's, control
// characters are not allowed, other bytes are kept as they are.
func (d *fastDecoder) skipString() bool {
	if !d.consume('"') {
		return false
	}
	for d.i < len(d.data) {
		c := d.data[d.i]
		d.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !d.escape() {
				return false
			}
		}
	}
	return false
}

// escape checks the escape after a backslash.
func (d *fastDecoder) escape() bool {
	if d.i >= len(d.data) {
		return false
	}
	c := d.data[d.i]
	d.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(d.data)-d.i < 4 {
			return false
		}
		for _, h := range d.data[d.i : d.i+4] {
			if !isHex(h) {
				return false
			}
		}
		d.i += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// number checks JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *fastDecoder) number() bool {
	d.consume('-')
	switch {
	case d.consume('0'):
	case d.i < len(d.data) && isDigit(d.data[d.i]):
		d.digits()
	default:
		return false
	}
	if d.consume('.') && !d.digits() {
		return false
	}
	if d.consume('e') || d.consume('E') {
		if !d.consume('+') {
			d.consume('-')
		}
		if !d.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits; false if there are none.
func (d *fastDecoder) digits() bool {
	start := d.i
	for d.i < len(d.data) && isDigit(d.data[d.i]) {
		d.i++
	}
	return d.i > start
}

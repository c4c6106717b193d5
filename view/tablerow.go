package view

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The table's fast path. A listing prints a row for each of possibly
// millions of lines, and most of a loop's lines are ralph's bookkeeping
// (iteration.started, iteration.finished, event.routed), whose payload
// encoding/json would decode by reflection, twice (once for Who, once for
// the describer), into strings that describe then formats with fmt. The
// fast path decodes what the row shows in one pass without reflection
// (events.DecodeFields) and appends the payload cell straight into the row.
// It answers only when it is sure to print what the slow path prints: a
// payload DecodeFields cannot be sure of, a topic without a fast describer,
// an autopilot's log, go the slow way. TestFastListingMatchesReference and
// TestTableRowMatchesFmt hold the two to the same bytes.

// rowFields is what the table reads of a bookkeeping payload: Who's
// iteration and hat, and the fields of the describers below (the view*
// structs' fields, every one of them, so that a value of the wrong kind
// fails here as it fails encoding/json).
type rowFields struct {
	iteration int
	hat       []byte
	// iteration.started
	events     int
	confirming bool
	backend    []byte
	// iteration.finished
	outcome, failure, message []byte
	durationMS                int
	input, output             int
	cacheRead, cacheWrite     int
	costUSD                   float64
	costSource                []byte
	// event.routed
	topic, as []byte
	to        [][]byte
}

// rowCells are the cells the fast path found: the iteration, the hat (the
// event's own, or else the payload's, borrowed from it) and the payload
// cell before sanitizing and clipping.
type rowCells struct {
	iteration  int
	hat        string
	payloadHat []byte
	text       []byte
}

// fastRows is the fast path's state, one per printer: the fields, the
// field lists that point into them and the payload cell being built.
type fastRows struct {
	f                         rowFields
	started, finished, routed []events.Field
	// fieldsFor is the method value, made once rather than for each line.
	fieldsFor func(topic string) []events.Field
	text      []byte
}

func newFastRows() *fastRows {
	r := &fastRows{}
	f := &r.f
	who := func(more ...events.Field) []events.Field {
		return append([]events.Field{{Key: "iteration", Int: &f.iteration}, {Key: "hat", Bytes: &f.hat}}, more...)
	}
	r.started = who(
		events.Field{Key: "events", IntCount: &f.events},
		events.Field{Key: "confirming", Bool: &f.confirming},
		events.Field{Key: "backend", Bytes: &f.backend})
	r.finished = who(
		events.Field{Key: "outcome", Bytes: &f.outcome},
		events.Field{Key: "failure", Bytes: &f.failure},
		events.Field{Key: "message", Bytes: &f.message},
		events.Field{Key: "duration_ms", Int: &f.durationMS},
		events.Field{Key: "tokens", Obj: []events.Field{
			{Key: "input_tokens", Int: &f.input}, {Key: "output_tokens", Int: &f.output},
			{Key: "cache_read_tokens", Int: &f.cacheRead}, {Key: "cache_write_tokens", Int: &f.cacheWrite},
		}},
		events.Field{Key: "cost_usd", Float: &f.costUSD},
		events.Field{Key: "cost_source", Bytes: &f.costSource})
	r.routed = who(
		events.Field{Key: "topic", Bytes: &f.topic},
		events.Field{Key: "to", ByteStrs: &f.to},
		events.Field{Key: "as", Bytes: &f.as})
	r.fieldsFor = r.topicFields
	return r
}

// topicFields is the field list of a topic the fast path describes, or nil.
func (r *fastRows) topicFields(topic string) []events.Field {
	switch topic {
	case runfiles.TopicIterationStarted:
		return r.started
	case runfiles.TopicIterationFinished:
		return r.finished
	case runfiles.TopicEventRouted:
		return r.routed
	}
	return nil
}

// reset zeroes the fields for the next payload, keeping to's array.
func (r *fastRows) reset() {
	r.f = rowFields{to: r.f.to[:0]}
}

// decode is dec.ParseLineFields filling the row's fields from the line's
// payload; filled says cells may use them for the event.
func (r *fastRows) decode(dec *events.Decoder, line []byte) (ev events.Event, filled bool, err error) {
	r.reset()
	return dec.ParseLineFields(line, r.fieldsFor)
}

// cells returns the row's iteration and hat (as Who) and its payload cell
// before sanitizing and clipping (as describe), or false when the slow path
// must say. filled says decode filled the fields from ev's line. What it
// returns is valid until the next call.
func (r *fastRows) cells(ev events.Event, filled bool) (rowCells, bool) {
	c := rowCells{iteration: ev.Iteration, hat: ev.Hat}
	if ev.Source != events.SourceRalph || !isObject(ev.Payload) {
		var ok bool
		c.text, ok = payloadBytes(ev.Payload)
		return c, ok
	}
	fields := r.topicFields(ev.Topic)
	if fields == nil {
		return c, false
	}
	if !filled {
		r.reset()
		if !events.DecodeFields(ev.Payload, fields...) {
			return c, false
		}
	}
	f := &r.f
	if c.iteration == 0 {
		c.iteration = f.iteration
	}
	if c.hat == "" {
		c.payloadHat = f.hat
	}
	t := r.text[:0]
	switch ev.Topic {
	case runfiles.TopicIterationStarted:
		t = appendStarted(t, f)
	case runfiles.TopicIterationFinished:
		t = appendFinished(t, f)
	default:
		t = appendRoute(t, f.topic, f.to, runfiles.Disposition(f.as))
	}
	r.text, c.text = t, t
	return c, true
}

// payloadBytes is Event.PayloadText without allocating, when the payload
// is what PayloadText returns (a JSON string without escapes is its
// contents, anything but a string is itself); false for a string
// PayloadText would have to decode.
func payloadBytes(payload []byte) ([]byte, bool) {
	p := bytes.TrimSpace(payload)
	switch {
	case len(p) == 0 || bytes.Equal(p, []byte("null")):
		return nil, true
	case p[0] != '"':
		return p, true
	case len(p) < 2 || p[len(p)-1] != '"':
		return nil, false
	}
	inner := p[1 : len(p)-1]
	if bytes.IndexByte(inner, '"') >= 0 || bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return nil, false
	}
	// Control characters are kept here and refused by plainCell, which
	// sends the cell the slow way.
	return inner, true
}

// appendStarted is describeStarted.
func appendStarted(t []byte, f *rowFields) []byte {
	t = append(t, f.hat...)
	if len(f.backend) > 0 {
		t = append(append(append(t, " ("...), f.backend...), ')')
	}
	if f.confirming {
		return append(t, " · confirming the completion claim"...)
	}
	t = append(t, " · "...)
	t = strconv.AppendInt(t, int64(f.events), 10)
	if f.events == 1 || f.events == -1 {
		return append(t, " event"...)
	}
	return append(t, " events"...)
}

// appendFinished is describeFinished.
func appendFinished(t []byte, f *rowFields) []byte {
	t = append(append(t, f.hat...), ' ')
	t = append(append(t, f.outcome...), ' ')
	t = appendHumanDuration(t, time.Duration(int64(f.durationMS))*time.Millisecond)
	t = append(t, ' ')
	t = appendHumanCount(t, int64(f.input)+int64(f.output))
	t = append(t, " tok "...)
	t = appendFinishedCost(t, f.costUSD, runfiles.CostSource(f.costSource))
	if len(f.failure) > 0 {
		t = append(append(t, " · "...), f.failure...)
		if len(f.message) > 0 {
			t = append(append(t, ": "...), f.message...)
		}
	}
	return t
}

// appendRoute is routeText.
func appendRoute(t, topic []byte, to [][]byte, as runfiles.Disposition) []byte {
	t = append(t, topic...)
	switch as {
	case runfiles.AsClaim:
		return append(t, ": completion claimed; a fresh agent will check it"...)
	case runfiles.AsCompletion:
		return append(t, ": completion accepted"...)
	case runfiles.AsCancellation:
		return append(t, ": run cancelled"...)
	case runfiles.AsQuestion:
		return append(t, ": the run waits for a person's answer"...)
	case runfiles.AsRoute: // to the hats, below
	}
	t = append(t, " → "...)
	if len(to) == 0 {
		return append(t, "coordinator"...)
	}
	for i, hat := range to {
		if i > 0 {
			t = append(t, ", "...)
		}
		t = append(t, hat...)
	}
	return t
}

// appendHumanCount is humanCount.
func appendHumanCount(t []byte, n int64) []byte {
	switch {
	case n < 1000:
		return strconv.AppendInt(t, n, 10)
	case n < 1_000_000:
		return append(appendTrimZero(t, float64(n)/1e3), 'k')
	default:
		return append(appendTrimZero(t, float64(n)/1e6), 'M')
	}
}

// appendTrimZero appends x as %.1f without a trailing ".0".
func appendTrimZero(t []byte, x float64) []byte {
	start := len(t)
	t = strconv.AppendFloat(t, x, 'f', 1, 64)
	if bytes.HasSuffix(t[start:], []byte(".0")) {
		t = t[:len(t)-2]
	}
	return t
}

// appendHumanDuration is humanDuration, without fmt or Duration.String
// for the durations iterations take; the rest it asks humanDuration.
func appendHumanDuration(t []byte, d time.Duration) []byte {
	switch {
	case d < 0:
	case d < time.Second:
		r := d.Round(time.Millisecond)
		if r == 0 {
			return append(t, "0s"...)
		}
		if r < time.Second {
			return append(strconv.AppendInt(t, int64(r/time.Millisecond), 10), "ms"...)
		}
	case d < time.Minute:
		if r := d.Round(time.Second); r < time.Minute {
			return append(strconv.AppendInt(t, int64(r/time.Second), 10), 's')
		}
	case d < time.Hour:
		r := d.Round(time.Second)
		t = append(strconv.AppendInt(t, int64(int(r.Minutes())), 10), 'm')
		return append(appendTwoDigits(t, int(r.Seconds())%60), 's')
	default:
		r := d.Round(time.Minute)
		t = append(strconv.AppendInt(t, int64(int(r.Hours())), 10), 'h')
		return append(appendTwoDigits(t, int(r.Minutes())%60), 'm')
	}
	return append(t, humanDuration(d)...)
}

// appendTwoDigits appends 0 <= n < 100 as %02d.
func appendTwoDigits(t []byte, n int) []byte {
	return append(t, byte('0'+n/10), byte('0'+n%10))
}

// plainCell reports whether Clip(Sanitize(s), n) is s itself: valid UTF-8
// without control characters or U+FFFD (Sanitize's clean), no whitespace
// but single spaces between words (what strings.Fields and a join keep),
// and at most n runes.
func plainCell(s []byte, n int) bool {
	i := plainASCIIPrefix(s)
	prev, runes := byte(' '), i // a leading space is not kept
	if i > 0 {
		prev = s[i-1]
	}
	for i < len(s) {
		runes++
		c := s[i]
		if ' ' < c && c < 0x7f {
			prev = c // printable ASCII but a space, the common case
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if c != ' ' || prev == ' ' {
				return false // a control character, or a space after a space
			}
			prev = c
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			return false
		}
		prev = 'x'
		i += size
	}
	return (prev != ' ' || len(s) == 0) && runes <= n
}

// Masks for testing the eight bytes of a word at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
	blank = 0x2020202020202020
)

// plainASCIIPrefix is how many bytes of s, a multiple of eight, plainCell
// would pass byte by byte as printable ASCII without two spaces in a row
// or a leading one, taken eight at a time: the cells are mostly such
// text, and this is most of their cost.
func plainASCIIPrefix(s []byte) int {
	i, prevSpace := 0, true
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		low := x & lows
		above := ((low + ones) | x) & highs            // a byte of 0x7f or more
		below := ^(low + (highs - blank)) & ^x & highs // a byte under 0x20
		y := x ^ blank
		space := ^(((y & lows) + lows) | y) & highs // a byte that is a space
		if above|below != 0 || space&(space<<8) != 0 || (prevSpace && s[i] == ' ') {
			break
		}
		prevSpace = s[i+7] == ' '
	}
	return i
}

// appendClock appends t's time of day as "15:04:05" lays it out.
func appendClock(row []byte, t time.Time) []byte {
	h, m, s := t.Clock()
	row = appendTwoDigits(row, h)
	row = appendTwoDigits(append(row, ':'), m)
	return appendTwoDigits(append(row, ':'), s)
}

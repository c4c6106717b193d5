package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// addSeeds adds every file matching glob as a seed.
func addSeeds(f *testing.F, glob string, add func(data []byte)) {
	f.Helper()
	paths, err := filepath.Glob(glob)
	require.NoError(f, err)
	require.NotEmpty(f, paths, "no seeds in %s", glob)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		add(data)
	}
}

func FuzzParseTags(f *testing.F) {
	addSeeds(f, "testdata/tags/*.txt", func(b []byte) { f.Add(string(b)) })
	for _, s := range []string{
		`<event topic="a">x</event>`,
		`<event topic='a"b' target="h">  y  </event>`,
		"<event topic=\"a\">\n\n  code\n\n</event>",
		`<event topic="a"/>`,
		"```\n<event topic=\"a\">x</event>\n```",
		`<event topic="a"><event topic="b">x</event>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tag := range events.ParseTags(text) {
			require.NotEmpty(t, tag.Topic, "a tag without a topic is never returned")
			rendered := tag.Render()
			require.Equal(t, []events.Tag{tag}, events.ParseTags(rendered), "round trip of %q", rendered)
		}
	})
}

func FuzzReader(f *testing.F) {
	addBytes := func(b []byte) { f.Add(b) }
	addSeeds(f, "testdata/logs/*.jsonl", addBytes)
	addSeeds(f, "testdata/*.golden", addBytes)
	f.Add([]byte("{\"topic\":\"a\",\"ts\":\"2024-01-01 00:00:00z\"}\n\n{\"topic\""))

	// Every run appends its input to one growing log and reads from where the
	// input starts, as the engine reads from a checkpoint offset. Writing a
	// fresh file per run would cost more than the run itself (ext4 flushes a
	// truncated-and-rewritten file on close).
	log := &growingLog{path: filepath.Join(f.TempDir(), "events.jsonl")}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := log.end(t)

		// Append in two parts, reading after each: a line cut by the first
		// part must come back whole, once, after the second.
		half := len(data) / 2
		appendRaw(t, log.path, string(data[:half]))
		r := events.NewReader(log.path, base)
		first, err := r.Read()
		require.NoError(t, err)
		appendRaw(t, log.path, string(data[half:]))
		second, err := r.Read()
		require.NoError(t, err)
		assert.Equal(t, base+int64(bytes.LastIndexByte(data, '\n')+1), r.Offset(),
			"every complete line is consumed, the partial one is not")

		recs, err := events.NewReader(log.path, base).Read()
		require.NoError(t, err)
		require.Equal(t, recs, append(first, second...), "split reads give what one read gives")
		checkRecords(t, data, base, recs)
		requireScanMatches(t, data, base, recs)
		requireBackwardMatches(t, data, recs, base)
	})
}

// growingLog is the log FuzzReader appends to, started afresh now and then
// so that it stays small.
type growingLog struct {
	path string
}

// end returns the offset where the next input will start.
func (g *growingLog) end(t *testing.T) int64 {
	info, err := os.Stat(g.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	if info.Size() > 16<<20 {
		require.NoError(t, os.Remove(g.path))
		return 0
	}
	return info.Size()
}

// checkRecords checks each record against the input bytes, which start at
// offset base in the log, and that each valid event survives being written
// and read again.
func checkRecords(t *testing.T, data []byte, base int64, recs []events.Record) {
	t.Helper()
	prevEnd := base
	for _, rec := range recs {
		require.GreaterOrEqual(t, rec.Offset, prevEnd, "offsets increase")
		at := rec.Offset - base
		require.Equal(t, data[at:at+int64(len(rec.Line))], rec.Line, "Line is the bytes at Offset")
		require.Equal(t, byte('\n'), data[rec.End()-base-1], "a record is a complete line")
		require.NotEmpty(t, bytes.TrimSpace(rec.Line), "blank lines are skipped")
		prevEnd = rec.End()
		if rec.Err != nil {
			require.ErrorIs(t, rec.Err, events.ErrMalformed)
			require.Equal(t, events.Event{}, rec.Event, "no half-built event with an error")
			continue
		}
		require.NotEmpty(t, rec.Event.Topic)
		line, err := events.EncodeLine(rec.Event)
		require.NoError(t, err, "re-marshal %s", rec.Line)
		again, err := events.ParseLine(line)
		require.NoError(t, err, "re-parse %s", line)
		requireSameEvent(t, rec.Event, again)
		line2, err := events.EncodeLine(again)
		require.NoError(t, err)
		require.Equal(t, string(line), string(line2), "encoding is stable")
	}
}

// requireScanMatches checks that Scan of the input alone gives the records
// Read gave, with offsets counted from the input's start.
func requireScanMatches(t *testing.T, data []byte, base int64, recs []events.Record) {
	t.Helper()
	var scanned []events.Record
	require.NoError(t, events.Scan(bytes.NewReader(data), func(rec events.Record) error {
		rec.Offset += base
		scanned = append(scanned, rec)
		return nil
	}))
	require.Equal(t, recs, scanned)
}

// requireBackwardMatches checks that BackwardScanner reads the input's
// records' lines, last first, at their offsets, and ends where Read ends.
func requireBackwardMatches(t *testing.T, data []byte, recs []events.Record, base int64) {
	t.Helper()
	b := events.NewBackwardScannerBlock(bytes.NewReader(data), int64(len(data)), 7)
	require.Equal(t, int64(bytes.LastIndexByte(data, '\n')+1), b.End())
	for i := len(recs) - 1; i >= 0; i-- {
		rec, err := b.Prev()
		require.NoError(t, err)
		require.Equal(t, recs[i].Offset-base, rec.Offset)
		require.Equal(t, string(recs[i].Line), string(rec.Line))
	}
	_, err := b.Prev()
	require.ErrorIs(t, err, io.EOF, "no line before the first")
}

// requireSameEvent compares events, times by instant rather than by
// location pointer.
func requireSameEvent(t *testing.T, want, got events.Event) {
	t.Helper()
	require.True(t, want.TS.Equal(got.TS), "ts %v != %v", want.TS, got.TS)
	want.TS, got.TS = want.TS.UTC(), got.TS.UTC()
	require.Equal(t, want, got)
}

// FuzzTagRender checks the round-trip promise Tag.Render makes for tags
// built by hand.
func FuzzTagRender(f *testing.F) {
	f.Add("build.done", "", "tests: pass")
	f.Add(`say"hi"`, "h", "  indented\ncode")
	f.Add("a", "it's", "x\r\ny")
	f.Fuzz(func(t *testing.T, topic, target, payload string) {
		tag := events.Tag{Topic: topic, Target: target, Payload: payload}
		if !renderable(tag) {
			t.Skip()
		}
		require.Equal(t, []events.Tag{tag}, events.ParseTags(tag.Render()))
	})
}

// renderable is the condition in Tag.Render's documentation.
func renderable(tag events.Tag) bool {
	attrOK := func(v string) bool {
		return v == strings.TrimSpace(v) && len(v) < 1024 &&
			!(strings.Contains(v, `"`) && strings.Contains(v, `'`))
	}
	firstLine, _, _ := strings.Cut(tag.Payload, "\n")
	payloadOK := tag.Payload == "" ||
		(strings.TrimRight(tag.Payload, " \t\r\n") == tag.Payload &&
			strings.TrimLeft(firstLine, " \t\r") != "" &&
			!strings.Contains(tag.Payload, "<event") &&
			!strings.Contains(tag.Payload, "</event>"))
	return tag.Topic != "" && attrOK(tag.Topic) && attrOK(tag.Target) && payloadOK
}

// FuzzParseLine checks one log line on its own, without FuzzReader's file:
// a line is an event or an ErrMalformed error with no event, the newline
// makes no difference, and an event survives being written and read back,
// written on one line, the same way every time.
func FuzzParseLine(f *testing.F) {
	addSeeds(f, "testdata/logs/*.jsonl", func(b []byte) {
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	})
	for _, s := range []string{
		`{"ts":"2024-01-01 00:00:00z","topic":"a","payload":{ "k" : [1, 2] }}`,
		`{"topic":"a","payload":"<event topic=\"x\">y</event> & \u2028","iteration":3,"hat":"h","source":"agent","target":"t"}`,
		`{"topic":"a","ts":17,"payload":null,"extra":true}`,
		`{"topic":"","payload":"x"}`,
		`{"topic":"a","ts":"2024-02-30T00:00:00+25:00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := events.ParseLine(line)
		withNewline, errNL := events.ParseLine(append(bytes.Clone(line), '\n'))
		require.Equal(t, err == nil, errNL == nil, "a trailing newline does not change whether %q parses", line)
		if err != nil {
			require.ErrorIs(t, err, events.ErrMalformed)
			require.Equal(t, events.Event{}, ev, "no half-built event with an error")
			return
		}
		requireSameEvent(t, ev, withNewline)
		require.NotEmpty(t, ev.Topic)

		encoded, err := events.EncodeLine(ev)
		require.NoError(t, err, "re-encode %q", line)
		require.Equal(t, len(encoded)-1, bytes.IndexByte(encoded, '\n'), "an event is written on one line: %q", encoded)
		again, err := events.ParseLine(encoded)
		require.NoError(t, err, "re-parse %q", encoded)
		requireSameEvent(t, ev, again)
		reencoded, err := events.EncodeLine(again)
		require.NoError(t, err)
		require.Equal(t, string(encoded), string(reencoded), "encoding is stable")
	})
}

// FuzzDecodeFast holds ParseLine's fast decoder to encoding/json: on every
// input it either declines or gives exactly the event encoding/json gives,
// and ParseLine's result and error are encoding/json's.
func FuzzDecodeFast(f *testing.F) {
	addSeeds(f, "testdata/logs/*.jsonl", func(b []byte) {
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	})
	for _, s := range []string{
		`{"ts":"2026-11-22T10:00:00.123456789Z","topic":"build.done","payload":"tests: pass","iteration":3,"hat":"builder","source":"agent"}`,
		`{"topic":"a","payload":{ "k" : [1, 2.5e-3, true, null, "x y"] },"iteration":-0}`,
		`{"topic":"a","topic":null,"hat":"h","hat":"i","payload":null,"payload":"p"}`,
		`{"Topic":"a"}`, `{"topic":"a","HAT":"h"}`, `{"topic":"a","\u0068at":"h"}`, `{"topic":"a","ſource":"x"}`,
		`{"topic":"b\u002ed"}`, `{"topic":"é"}`, "{\"topic\":\"\xff\"}", "{\"topic\":\"a\",\"payload\":\"\xff\"}",
		`{"topic":"a","iteration":3.0}`, `{"topic":"a","iteration":1e2}`, `{"topic":"a","iteration":99999999999999999999}`,
		`{"topic":"a","iteration":"3"}`, `{"topic":"a","iteration":01}`, `{"topic":5}`, `{"topic":"a"} x`,
		`{"topic":"a",}`, `{"topic":"a","payload":[1,]}`, `{"topic":"a","x":{"y":[{"z":"\ud800"}]}}`,
		" \t{\"topic\":\"a\"}\r", `{}`, `null`, `[]`, `{"topic":""}`, `{"topic":"a","ts":17}`,
		`{"topic":"a","payload":"line\nbreak \"quoted\" \u2028"}`, `{"topic":"a","extra":-}`, `{"topic":"a","e":1.}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, wantErr := events.ParseLineJSON(line)
		got, gotErr := events.ParseLine(line)
		require.Equal(t, wantErr, gotErr, "ParseLine's error is encoding/json's for %q", line)
		requireSameEvent(t, want, got)
		fast, ok := events.DecodeFast(line)
		if !ok {
			return
		}
		require.NoError(t, wantErr, "the fast path accepted %q, which encoding/json rejects", line)
		requireSameEvent(t, want, fast)
		if want.Payload == nil {
			require.Nil(t, fast.Payload, "a null or missing payload is nil in %q", line)
		}
	})
}

// FuzzPayloadText holds PayloadText's shortcut for plain strings to what
// encoding/json decodes.
func FuzzPayloadText(f *testing.F) {
	for _, s := range []string{`"tests: pass"`, `"a\"b"`, `"é"`, "\"\xff\"", `"a"b"`, `"`, `""`, `null`, `{"k":1}`, "\"tab\there\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		want := string(bytes.TrimSpace(payload))
		var s string
		switch {
		case want == "" || want == "null":
			want = ""
		case want[0] == '"' && json.Unmarshal([]byte(want), &s) == nil:
			want = s
		}
		require.Equal(t, want, events.Event{Payload: payload}.PayloadText(), "payload %q", payload)
	})
}

// FuzzDecodeFields holds DecodeFields to encoding/json: when it answers,
// it fills what encoding/json fills, and it never answers for an object
// encoding/json rejects. The struct has a field of every kind.
func FuzzDecodeFields(f *testing.F) {
	for _, s := range []string{
		`{"iteration":3,"hat":"builder","outcome":"success","tokens":{"in":1}}`,
		`{"hat":null,"iteration":null}`, `{"HAT":"x"}`, `{"hat":"a\"b"}`, `{"iteration":1.5}`, `{"hat":5}`,
		`{}`, `[]`, `{"hat":"x"} y`, "{\"hat\":\"\xff\"}", `{"hat":"é","iteration":-12}`, `{"hat":"x","hat":"y"}`,
		`{"ok":true,"cost":0.0123,"to":["reviewer","a"],"events":[1,2,3],"tokens":{"in":5,"out":"x"}}`,
		`{"ok":false,"cost":-1e-3,"to":[],"events":[],"tokens":{}}`, `{"ok":null,"cost":null,"to":null,"events":null,"tokens":null}`,
		`{"ok":1}`, `{"cost":1e400}`, `{"cost":"1"}`, `{"to":[null]}`, `{"to":["a",1]}`, `{"events":[1.5]}`, `{"events":[null]}`,
		`{"events":[1,]}`, `{"to":["a" "b"]}`, `{"tokens":{"IN":1}}`, `{"tokens":{"in":1},"tokens":{"out":"y"}}`, `{"tokens":[1]}`,
		`{"to":["a"],"to":["b","c"]}`, `{ "to" : [ "a" , "b" ] , "tokens" : { "in" : 1 } }`, `{"cost":-0}`, `{"cost":01}`,
	} {
		f.Add([]byte(s))
	}
	type tokens struct {
		In  int    `json:"in"`
		Out string `json:"out"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want struct {
			Iteration int      `json:"iteration"`
			Hat       string   `json:"hat"`
			OK        bool     `json:"ok"`
			Cost      float64  `json:"cost"`
			To        []string `json:"to"`
			Events    []int64  `json:"events"`
			Tokens    tokens   `json:"tokens"`
		}
		wantErr := json.Unmarshal(data, &want)
		var (
			iteration, count int
			hat              string
			ok               bool
			cost             float64
			to               []string
			tok              tokens
		)
		fields := []events.Field{
			{Key: "iteration", Int: &iteration}, {Key: "hat", Str: &hat}, {Key: "ok", Bool: &ok},
			{Key: "cost", Float: &cost}, {Key: "to", Strs: &to}, {Key: "events", IntCount: &count},
			{Key: "tokens", Obj: []events.Field{{Key: "in", Int: &tok.In}, {Key: "out", Str: &tok.Out}}},
		}
		var dec events.Decoder
		answered := events.DecodeFields(data, fields...)
		if answered != dec.DecodeFields(data, fields...) {
			t.Fatalf("DecodeFields and Decoder.DecodeFields disagree on %q", data)
		}
		if !answered {
			return
		}
		require.NoError(t, wantErr, "DecodeFields answered for %q, which encoding/json rejects", data)
		require.Equal(t, want.Iteration, iteration, "iteration of %q", data)
		require.Equal(t, want.Hat, hat, "hat of %q", data)
		require.Equal(t, want.OK, ok, "ok of %q", data)
		require.Equal(t, math.Float64bits(want.Cost), math.Float64bits(cost), "cost of %q", data)
		require.Equal(t, want.To, to, "to of %q", data)
		require.Equal(t, len(want.Events), count, "events of %q", data)
		require.Equal(t, want.Tokens, tok, "tokens of %q", data)

		// Bytes and ByteStrs answer as Str and Strs do, with the same values.
		var hatBytes []byte
		var toBytes [][]byte
		fields[1], fields[4] = events.Field{Key: "hat", Bytes: &hatBytes}, events.Field{Key: "to", ByteStrs: &toBytes}
		require.True(t, events.DecodeFields(data, fields...), "Bytes and ByteStrs refuse %q", data)
		require.Equal(t, want.Hat, string(hatBytes), "hat bytes of %q", data)
		require.Len(t, toBytes, len(want.To), "to bytes of %q", data)
		for i, b := range toBytes {
			require.Equal(t, want.To[i], string(b), "to bytes of %q", data)
		}
	})
}

// FuzzParseLineFields holds ParseLineFields to ParseLine and DecodeFields
// apart: its event and error are ParseLine's, and when it says it filled
// the fields, DecodeFields on the event's payload answers too, with the
// same values.
func FuzzParseLineFields(f *testing.F) {
	addSeeds(f, "testdata/logs/*.jsonl", func(b []byte) {
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	})
	for _, s := range []string{
		`{"ts":"2026-11-22T10:00:00Z","topic":"iteration.finished","payload":{"iteration":3,"hat":"builder","ok":true,"cost":0.0123,"tokens":{"in":1,"out":"x"}},"source":"ralph"}`,
		`{"topic":"a","payload":{ "hat" : "x", "to" : [ "a" ] }}`, `{"topic":"a","payload":{"hat":"x y"}}`,
		`{"topic":"a","payload":{"hat":"x"},"payload":{"iteration":2}}`, `{"topic":"a","payload":{"hat":5}}`,
		`{"topic":"a","payload":{"HAT":"x"}}`, `{"topic":"a","payload":{"hat":"a\"b"}}`, `{"topic":"a","payload":null}`,
		`{"topic":"a","payload":{"to":["a",1]}}`, `{"topic":"a","payload":{"x":[[[1]]]}}`, `{"topic":"","payload":{}}`,
		`{"topic":"a","payload":{"hat":"x"} ,"iteration":1.5}`, `{"topic":"a","payload":{"events":[1,2],"ok":null}}`,
		`{"topic":"a","payload":{"hat":"x"}`, `{"topic":"none","payload":{"hat":"x"}}`, `{"payload":{"hat":"x"},"topic":"a"}`,
		`{"topic":"a","payload":{"hat":"x"},"topic":"b"}`, `{"topic":"a","payload":{"hat":"x"},"topic":null}`, `{"topic":"a","payload":{"hat":"x",}}`, "{\"topic\":\"a\",\"payload\":{\"hat\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	type values struct {
		iteration, count int
		hat              string
		ok               bool
		cost             float64
		to               [][]byte
		in               int
		out              []byte
	}
	fieldsOf := func(v *values) []events.Field {
		return []events.Field{
			{Key: "iteration", Int: &v.iteration}, {Key: "hat", Str: &v.hat}, {Key: "ok", Bool: &v.ok},
			{Key: "cost", Float: &v.cost}, {Key: "to", ByteStrs: &v.to}, {Key: "events", IntCount: &v.count},
			{Key: "tokens", Obj: []events.Field{{Key: "in", Int: &v.in}, {Key: "out", Bytes: &v.out}}},
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		// A new decoder each time, so that what a run covers does not
		// depend on the strings the runs before it shared.
		var dec events.Decoder
		want, wantErr := events.ParseLine(line)
		var got values
		var asked []string
		fieldsFor := func(topic string) []events.Field {
			asked = append(asked, topic)
			if topic == "none" {
				return nil
			}
			return fieldsOf(&got)
		}
		ev, filled, err := dec.ParseLineFields(line, fieldsFor)
		require.Equal(t, wantErr, err, "ParseLineFields' error is ParseLine's for %q", line)
		requireSameEvent(t, want, ev)
		if !filled {
			return
		}
		require.Equal(t, ev.Topic, asked[len(asked)-1], "filled for the line's topic in %q", line)
		require.NotEqual(t, "none", ev.Topic, "filled without fields in %q", line)
		var again values
		require.True(t, events.DecodeFields(ev.Payload, fieldsOf(&again)...), "filled from %q, which DecodeFields refuses", line)
		require.Equal(t, math.Float64bits(again.cost), math.Float64bits(got.cost), "cost of %q", line)
		again.cost, got.cost = 0, 0
		require.Equal(t, again, got, "fields of %q", line)
	})
}

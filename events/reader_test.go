package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// appendRaw appends bytes to path as another process would.
func appendRaw(t testing.TB, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func topics(recs []events.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Event.Topic)
	}
	return out
}

func TestReaderPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	r := events.NewReader(path, 0)

	recs, err := r.Read()
	require.NoError(t, err, "a missing file reads as empty")
	assert.Empty(t, recs)

	first := `{"topic":"first","payload":"1"}` + "\n"
	appendRaw(t, path, first+`{"topic":"sec`)
	recs, err = r.Read()
	require.NoError(t, err)
	assert.Equal(t, []string{"first"}, topics(recs))
	assert.Equal(t, int64(len(first)), r.Offset(), "the partial line is not consumed")

	recs, err = r.Read()
	require.NoError(t, err)
	assert.Empty(t, recs, "still partial")
	assert.Equal(t, int64(len(first)), r.Offset())

	appendRaw(t, path, `ond"}`)
	recs, err = r.Read()
	require.NoError(t, err)
	assert.Empty(t, recs, "complete JSON without its newline is still partial")

	appendRaw(t, path, "\n")
	recs, err = r.Read()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "second", recs[0].Event.Topic)
	assert.Equal(t, int64(len(first)), recs[0].Offset)
	assert.Equal(t, `{"topic":"second"}`, string(recs[0].Line))
	assert.Equal(t, int64(len(first)+len(`{"topic":"second"}`)+1), r.Offset())
	assert.Equal(t, r.Offset(), recs[0].End())
}

func TestReaderMixed(t *testing.T) {
	data, err := os.ReadFile("testdata/logs/mixed.jsonl")
	require.NoError(t, err)
	recs, err := events.NewReader("testdata/logs/mixed.jsonl", 0).Read()
	require.NoError(t, err)

	type want struct {
		topic     string
		malformed string // substring of Err; empty means valid
	}
	wants := []want{
		{topic: "build.done"},
		// the blank line is skipped
		{malformed: "not a JSON event object"},
		{topic: "a.b"},
		{malformed: `no "topic"`},
		{malformed: `no "topic"`},
		{malformed: "not a JSON event object"}, // topic is a number
		{malformed: `no "topic"`},              // null
		{malformed: "not a JSON event object"}, // an array
		{malformed: "not a JSON event object"}, // trailing garbage
		// the whitespace-only line is skipped
		{topic: "num"},
	}
	require.Len(t, recs, len(wants))
	for i, w := range wants {
		rec := recs[i]
		line := string(rec.Line)
		// Offsets are exact: the line is at its offset and ends in '\n'.
		assert.Equal(t, line, string(data[rec.Offset:rec.Offset+int64(len(rec.Line))]), "line %d", i)
		assert.Equal(t, byte('\n'), data[rec.End()-1], "line %d", i)
		if i > 0 {
			assert.Greater(t, rec.Offset, recs[i-1].Offset)
		}
		if w.malformed != "" {
			require.Error(t, rec.Err, line)
			assert.ErrorIs(t, rec.Err, events.ErrMalformed, line)
			assert.Contains(t, rec.Err.Error(), w.malformed, line)
			assert.Equal(t, events.Event{}, rec.Event, "no half-built event with an error: %s", line)
			continue
		}
		require.NoError(t, rec.Err, line)
		assert.Equal(t, w.topic, rec.Event.Topic)
	}
	assert.Equal(t, json.RawMessage(`[1,2,3]`), recs[2].Event.Payload)
	assert.Equal(t, json.RawMessage(`12.5e3`), recs[9].Event.Payload)
	assert.True(t, recs[9].Event.TS.IsZero(), "an unparseable ts does not fail the line")
}

func TestReaderOrchestratorLines(t *testing.T) {
	recs, err := events.NewReader("testdata/logs/orchestrator.jsonl", 0).Read()
	require.NoError(t, err)
	require.Len(t, recs, 6)
	for _, r := range recs {
		require.NoError(t, r.Err, string(r.Line))
	}
	utc := func(s string) time.Time {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return ts
	}
	tests := []struct {
		topic, payloadText, hat string
		iteration               int
		ts                      time.Time
	}{
		{"task.start", "Build a CLI", "", 0, utc("2024-01-01T00:00:00Z")},
		{"build.task", "write main.go", "planner", 1, utc("2023-12-31T22:00:01.5Z")},
		{"review.done", `{"status":"approved","files":["a.rs","b.rs"]}`, "", 0, utc("2024-01-01T00:00:02Z")},
		{"heartbeat", "", "", 0, utc("2024-01-01T00:00:03Z")},
		{"build.done", "tests: pass\nlint: pass", "", 0, utc("2024-01-01T00:00:04Z")},
		{"LOOP_COMPLETE", "", "", 0, time.Time{}},
	}
	for i, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			ev := recs[i].Event
			assert.Equal(t, tt.topic, ev.Topic)
			assert.Equal(t, tt.payloadText, ev.PayloadText())
			assert.Equal(t, tt.hat, ev.Hat)
			assert.Equal(t, tt.iteration, ev.Iteration)
			assert.True(t, tt.ts.Equal(ev.TS), "ts %v, want %v", ev.TS, tt.ts)
		})
	}
	assert.Nil(t, recs[3].Event.Payload, "a missing payload is nil")
}

func TestParseLineTimestamps(t *testing.T) {
	want := time.Date(2024, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	tests := []struct {
		name string
		ts   string // JSON value
		want time.Time
	}{
		{"RFC3339Nano", `"2024-01-02T03:04:05.6Z"`, want},
		{"offset", `"2024-01-02T04:04:05.600+01:00"`, want},
		{"lower case", `"2024-01-02t03:04:05.6z"`, want},
		{"space separator", `"2024-01-02 03:04:05.6Z"`, want},
		{"missing", ``, time.Time{}},
		{"null", `null`, time.Time{}},
		{"empty", `""`, time.Time{}},
		{"no zone", `"2024-01-02T03:04:05"`, time.Time{}},
		{"number", `1704164645`, time.Time{}},
		{"object", `{"s":1}`, time.Time{}},
		{"garbage", `"yesterday"`, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := `{"topic":"t"}`
			if tt.ts != "" {
				line = `{"topic":"t","ts":` + tt.ts + `}`
			}
			ev, err := events.ParseLine([]byte(line))
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(ev.TS), "got %v", ev.TS)
		})
	}
}

func TestParseLinePayloads(t *testing.T) {
	tests := []struct {
		payload string // JSON value; empty means absent
		want    json.RawMessage
	}{
		{`"text"`, json.RawMessage(`"text"`)},
		{`{ "a" : [ 1, 2 ] }`, json.RawMessage(`{"a":[1,2]}`)},
		{`[ ]`, json.RawMessage(`[]`)},
		{`-1.5`, json.RawMessage(`-1.5`)},
		{`true`, json.RawMessage(`true`)},
		{`null`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.payload, func(t *testing.T) {
			line := `{"topic":"t"}`
			if tt.payload != "" {
				line = `{"topic":"t","payload":` + tt.payload + `}`
			}
			ev, err := events.ParseLine([]byte(line))
			require.NoError(t, err)
			assert.Equal(t, tt.want, ev.Payload)
		})
	}
}

func TestReaderCRLFAndUnicode(t *testing.T) {
	recs, err := events.NewReader("testdata/logs/crlf.jsonl", 0).Read()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.NoError(t, recs[0].Err)
	assert.Equal(t, "crlf", recs[0].Event.Topic)
	assert.Equal(t, `{"topic":"crlf","payload":"x"}`+"\r", string(recs[0].Line), "Line is the raw bytes")
	require.NoError(t, recs[1].Err)
	assert.Equal(t, "é.ü", recs[1].Event.Topic)
	assert.Equal(t, "\u2028<b>&", recs[1].Event.PayloadText())
}

func TestReaderHugeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	big := strings.Repeat("0123456789abcdef", 900<<10/16) // more than a read, less than the limit
	log, err := events.OpenLog(path)
	require.NoError(t, err)
	require.NoError(t, log.Append(events.Event{Topic: "small.before"}))
	require.NoError(t, log.Append(events.Event{Topic: "huge", Payload: events.StringPayload(big)}))
	require.NoError(t, log.Append(events.Event{Topic: "small.after"}))
	require.NoError(t, log.Close())

	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	require.Equal(t, []string{"small.before", "huge", "small.after"}, topics(recs))
	assert.Equal(t, big, recs[1].Event.PayloadText())
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, info.Size(), recs[2].End())

	var scanned []string
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, events.Scan(f, func(r events.Record) error {
		scanned = append(scanned, r.Event.Topic)
		return r.Err
	}))
	assert.Equal(t, topics(recs), scanned)
}

func TestReaderFromOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	lines := []string{`{"topic":"one"}`, `{"topic":"two"}`, `{"topic":"three"}`}
	appendRaw(t, path, strings.Join(lines, "\n")+"\n")

	all, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	require.Len(t, all, 3)

	// Resuming from a saved offset reads exactly the rest.
	r := events.NewReader(path, all[0].End())
	rest, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, []string{"two", "three"}, topics(rest))
	assert.Equal(t, all[1].Offset, rest[0].Offset)

	// Nothing new: nothing returned, offset unchanged.
	again, err := r.Read()
	require.NoError(t, err)
	assert.Empty(t, again)
	assert.Equal(t, all[2].End(), r.Offset())
}

func TestReaderBlankLinesAdvanceOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendRaw(t, path, "\n  \n\t\r\n")
	r := events.NewReader(path, 0)
	recs, err := r.Read()
	require.NoError(t, err)
	assert.Empty(t, recs)
	assert.Equal(t, int64(7), r.Offset())
}

func TestReaderTruncatedLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendRaw(t, path, `{"topic":"a"}`+"\n")
	r := events.NewReader(path, 100)
	recs, err := r.Read()
	require.ErrorIs(t, err, events.ErrTruncated)
	assert.Contains(t, err.Error(), path)
	assert.Nil(t, recs)
	assert.Equal(t, int64(100), r.Offset(), "an error consumes nothing")
}

func TestReaderUnreadable(t *testing.T) {
	dir := t.TempDir()
	_, err := events.NewReader(dir, 0).Read() // a directory, not a file
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read event log "+dir)
}

func TestScanMatchesRead(t *testing.T) {
	for _, name := range []string{"mixed.jsonl", "orchestrator.jsonl", "partial.jsonl", "crlf.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata/logs", name)
			read, err := events.NewReader(path, 0).Read()
			require.NoError(t, err)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var scanned []events.Record
			require.NoError(t, events.Scan(bytes.NewReader(data), func(r events.Record) error {
				scanned = append(scanned, r)
				return nil
			}))
			assert.Equal(t, read, scanned)
		})
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := events.Scan(strings.NewReader("{\"topic\":\"a\"}\n{\"topic\":\"b\"}\n"), func(events.Record) error {
		calls++
		return stop
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, calls)
}

func TestScanIgnoresFinalPartialLine(t *testing.T) {
	var got []string
	require.NoError(t, events.Scan(strings.NewReader("{\"topic\":\"a\"}\n{\"topic\":\"b\"}"), func(r events.Record) error {
		got = append(got, r.Event.Topic)
		return nil
	}))
	assert.Equal(t, []string{"a"}, got)
}

func TestReaderNegativeOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendRaw(t, path, `{"topic":"a"}`+"\n")
	_, err := events.NewReader(path, -1).Read()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "negative offset -1")
}

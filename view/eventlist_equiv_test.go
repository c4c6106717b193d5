package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
	"github.com/ralph-loop/ralph/runfiles"
)

// The reference listing is `ralph events` as it was before it skipped
// lines and read --last from the end: every line decoded, every record
// through Keep, a ring for --last, rows printed with fmt. The fast listing
// must print exactly what it prints, count the same malformed lines, and
// leave a follow at the same offset and run state. The one difference is
// documented: with --last, --json counts only the malformed lines that come
// after the oldest of the N it prints (all of them when it finds fewer than
// N), the lines a read from the end looks at.

type referenceResult struct {
	out       string
	malformed int
	ended     bool
	offset    int64
}

func referenceList(t *testing.T, path string, f EventFilter, last int, jsonOut, apilot bool) referenceResult {
	t.Helper()
	var out bytes.Buffer
	res := referenceResult{}
	print := func(rec events.Record) {
		if jsonOut {
			if rec.Err != nil {
				res.malformed++
				return
			}
			out.Write(rec.Line)
			out.WriteString("\n")
			return
		}
		referenceRow(&out, rec, apilot)
	}
	if !jsonOut {
		fmt.Fprintf(&out, tableFormat, "TIME", "ITER", "HAT", "SOURCE", "TOPIC", "PAYLOAD")
	}
	var ring []events.Record
	var malformedAt []int64 // with --last, the offsets of the malformed lines --json leaves out
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	require.NoError(t, events.Scan(file, func(rec events.Record) error {
		res.offset = rec.End()
		if src := rec.Event.Source; rec.Err == nil && src != events.SourceAgent && src != events.SourceTag {
			end, start := []string{runfiles.TopicLoopTerminate}, []string{runfiles.TopicLoopResumed, runfiles.TopicLoopStarted}
			if apilot {
				end, start = []string{runfiles.TopicAutopilotStopped}, []string{runfiles.TopicAutopilotStarted}
			}
			switch {
			case slices.Contains(end, rec.Event.Topic):
				res.ended = true
			case slices.Contains(start, rec.Event.Topic):
				res.ended = false
			}
		}
		if !f.Keep(rec) {
			return nil
		}
		if rec.Err != nil && jsonOut {
			if last > 0 {
				malformedAt = append(malformedAt, rec.Offset)
			} else {
				res.malformed++
			}
			return nil
		}
		if last > 0 {
			ring = append(ring, rec)
			if len(ring) > last {
				ring = ring[1:]
			}
			return nil
		}
		print(rec)
		return nil
	}))
	for _, offset := range malformedAt {
		if len(ring) < last || offset > ring[0].Offset {
			res.malformed++
		}
	}
	for _, rec := range ring {
		print(rec)
	}
	res.out = out.String()
	return res
}

// referenceRow is the table row as fmt printed it.
func referenceRow(w io.Writer, rec events.Record, apilot bool) {
	if rec.Err != nil {
		fmt.Fprintf(w, tableFormat, "-", "-", "-", "-", "(malformed)", Clip(Sanitize(string(rec.Line)), 80))
		return
	}
	ev := rec.Event
	iteration, hat := Who(ev)
	ts := "-"
	if !ev.TS.IsZero() {
		ts = ev.TS.In(time.UTC).Format("15:04:05")
	}
	iter := "-"
	if iteration != 0 {
		iter = fmt.Sprint(iteration)
	}
	p := &EventPrinter{Autopilot: apilot}
	fmt.Fprintf(w, tableFormat, ts, iter, orDash(hat), orDash(ev.Source),
		Sanitize(ev.Topic), referenceClip(Sanitize(p.describe(ev)), 100))
}

// referenceClip is Clip without its shortcut.
func referenceClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// fastList is the listing under test, up to where a follow would start.
func fastList(t *testing.T, path string, f EventFilter, last int, jsonOut, apilot bool) referenceResult {
	t.Helper()
	return fastListing(t, path, f, last, jsonOut, apilot, true)
}

// fastListing is the listing under test, following or not; without
// follow it does not track where the run is, so only its output and
// malformed count are to be compared.
func fastListing(t *testing.T, path string, f EventFilter, last int, jsonOut, apilot, follow bool) referenceResult {
	t.Helper()
	var out bytes.Buffer
	p := &EventPrinter{W: &out, JSON: jsonOut, Loc: time.UTC, Autopilot: apilot}
	require.NoError(t, p.Header())
	s := &logPrinter{keep: f.Keep, filter: f.prefilter(), p: p, flush: func() error { return nil }, last: last, autopilot: apilot}
	require.NoError(t, s.printExisting(path, follow))
	return referenceResult{out: out.String(), malformed: p.Malformed, ended: s.ended, offset: s.offset}
}

// trickyLines are what a byte search could get wrong: payloads and
// agents that name a topic or a hat, escapes that spell one, keys in
// another case, ralph's lines whose hat is in the payload, and lines that
// are not events.
var trickyLines = []string{
	`{"ts":"2026-11-22T10:00:00Z","topic":"loop.started","payload":{"run_id":"r","objective":"build.done by builder"},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:01Z","topic":"build\u002edone","payload":"escaped topic","source":"agent","hat":"builder","iteration":2}`,
	`{"ts":"2026-11-22T10:00:02Z","topic":"build.done","payload":"escaped hat","source":"agent","hat":"b\u0075ilder","iteration":2}`,
	`{"ts":"2026-11-22T10:00:03Z","TOPIC":"build.done","payload":"key in capitals","source":"agent","Hat":"builder"}`,
	`{"ts":"2026-11-22T10:00:04Z","topic":"iteration.finished","payload":{"iteration":9,"hat":"reviewer","outcome":"success"},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:05Z","topic":"review.approved","payload":"mentions build.done and builder","source":"tag","hat":"reviewer","iteration":9}`,
	`{not json build.done builder`,
	`{"topic":"","payload":"build.done"}`,
	`{"ts":"2026-11-22T10:00:06Z","topic":"a\/b.done","payload":"slash","source":"agent","hat":"x/y"}`,
	`{"ts":"2026-11-22T10:00:07Z","topic":"a/b.done","payload":"slash","source":"agent","hat":"x\/y"}`,
	`{"ts":"2026-11-22T10:00:08Z","topic":"loop.terminate","payload":{"reason":"completed"},"source":"agent"}`,
	"{\"ts\":\"2026-11-22T10:00:09Z\",\"topic\":\"build.done\",\"payload\":\"crlf\",\"source\":\"agent\",\"hat\":\"builder\",\"iteration\":3}\r",
	`{"topic":"build.done","payload":"no time","source":"agent","hat":"héros"}`,
	`   `,
	``,
	`{"ts":"2026-11-22T10:00:10Z","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:11Z","topic":"loop.resumed","payload":{"iteration":4},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:12Z","topic":"autopilot.stopped","payload":{"reason":"all done"},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:13Z","topic":"task.running","payload":{"task":"t1","slot":"1","pid":42},"source":"ralph"}`,
	`{"ts":"2026-11-22T10:00:14Z","topic":"build.done","payload":{"hat":"builder"},"source":"ralph"}`,
	`{"ts":"2026-11-22 10:00:15z","topic":"build.blocked","payload":"  spaced   text\twith tabs ","source":"agent","hat":"builder","iteration":5}`,
	`{"ts":"2026-11-22T10:00:16Z","topic":"build.done","payload":"` + strings.Repeat("long payload ", 20) + `","source":"agent","hat":"builder","iteration":6}`,
}

// writeEquivLog writes generated lines with the tricky ones spread among
// them; the last line has no newline, as one still being written.
func writeEquivLog(t *testing.T, generated int, ending string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, benchgen.Interleave(generated, 37, trickyLines, ending), 0o644))
	return path
}

// TestFastListingMatchesReference lists logs through every filter, alone
// and combined, with and without --last, as JSON and as a table, and
// compares with the reference listing.
func TestFastListingMatchesReference(t *testing.T) {
	since := benchgen.Start.Add(30 * time.Second)
	filters := []EventFilter{
		{},
		{Topic: "build.done"}, {Topic: "build.*"}, {Topic: "*.done"}, {Topic: "*"}, {Topic: "a/b.done"},
		{Topic: "loop.terminate"}, {Topic: "review.*.x"}, {Topic: "no.such"},
		{Hat: "builder"}, {Hat: "reviewer"}, {Hat: "x/y"}, {Hat: "héros"}, {Hat: `we"ird`},
		{Iteration: 3}, {Iteration: 9},
		{Since: since}, {Since: benchgen.Start.Add(time.Hour)},
		{Topic: "build.*", Hat: "builder"}, {Topic: "*.done", Iteration: 2, Since: since},
		{Hat: "builder", Iteration: 4},
	}
	endings := map[string]string{
		"complete":         "",
		"partial":          `{"ts":"2026-11-22T11:00:00Z","topic":"build.done","payload":"half`,
		"partial-boundary": `{"topic":"loop.terminate","source":"ralph"}`,
	}
	for name, ending := range endings {
		path := writeEquivLog(t, 600, ending)
		for _, f := range filters {
			for _, last := range []int{0, 1, 3, 50, 100000} {
				for _, jsonOut := range []bool{true, false} {
					for _, apilot := range []bool{false, true} {
						want := referenceList(t, path, f, last, jsonOut, apilot)
						got := fastList(t, path, f, last, jsonOut, apilot)
						requireSameListing(t, want, got, "%s log, filter %+v, --last %d, json %v, autopilot %v", name, f, last, jsonOut, apilot)
						got = fastListing(t, path, f, last, jsonOut, apilot, false)
						require.Equal(t, want.malformed, got.malformed, "%s log, filter %+v, --last %d, json %v, autopilot %v, no follow: malformed lines", name, f, last, jsonOut, apilot)
						require.Equal(t, want.out, got.out, "%s log, filter %+v, --last %d, json %v, autopilot %v, no follow", name, f, last, jsonOut, apilot)
					}
				}
			}
		}
	}
}

// requireSameListing compares listings line by line, so that a failure
// shows the first line that differs rather than two whole logs.
func requireSameListing(t *testing.T, want, got referenceResult, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	wantLines, gotLines := strings.SplitAfter(want.out, "\n"), strings.SplitAfter(got.out, "\n")
	for i := range min(len(wantLines), len(gotLines)) {
		require.Equal(t, wantLines[i], gotLines[i], "%s: line %d", msg, i+1)
	}
	require.Len(t, gotLines, len(wantLines), "%s: lines printed", msg)
	want.out, got.out = "", ""
	require.Equal(t, want, got, msg)
}

// An empty log, a log of blank lines and one without any complete line
// list as nothing, from the offset where the complete lines end.
func TestFastListingOfEmptyLogs(t *testing.T) {
	for _, content := range []string{"", "\n\n  \r\n", `{"topic":"a"}`, "x\n"} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		for _, last := range []int{0, 2} {
			for _, jsonOut := range []bool{true, false} {
				want := referenceList(t, path, EventFilter{}, last, jsonOut, false)
				got := fastList(t, path, EventFilter{}, last, jsonOut, false)
				if want.offset == 0 || strings.TrimSpace(content) == "" {
					// The reference leaves the offset past the last
					// non-blank line; after blank ones, a follow reads
					// them again and skips them again.
					want.offset, got.offset = 0, 0
				}
				requireSameListing(t, want, got, "%q, --last %d, json %v", content, last, jsonOut)
			}
		}
	}
}

// The prefilter never drops a line the filter keeps: checked line by line
// on the tricky lines and a generated log.
func TestPrefilterIsNecessary(t *testing.T) {
	lines := slices.Clone(trickyLines)
	for i := range 64 {
		lines = append(lines, benchgen.Line(i))
	}
	filters := []EventFilter{
		{Topic: "build.done"}, {Topic: "build.*"}, {Topic: "*.done"}, {Topic: "a/b.done"},
		{Hat: "builder"}, {Hat: "reviewer"}, {Hat: "x/y"}, {Topic: "*.done", Hat: "builder"},
	}
	for _, f := range filters {
		pf := f.prefilter()
		for _, line := range lines {
			rec := events.Record{Line: []byte(line)}
			rec.Event, rec.Err = events.ParseLine(rec.Line)
			if f.Keep(rec) {
				require.True(t, pf.mayKeep(rec.Line), "filter %+v keeps %s, the prefilter drops it", f, line)
			}
		}
	}
	require.Nil(t, EventFilter{}.prefilter(), "without a filter every line is decoded")
}

// A row built by appendRow is the one fmt printed, for events of every
// shape: no time, wide cells, negative and large iterations.
func TestTableRowMatchesFmt(t *testing.T) {
	evs := []events.Event{
		{Topic: "build.done", Source: events.SourceAgent, Payload: events.StringPayload("x")},
		{TS: benchgen.Start, Topic: strings.Repeat("very.long", 5), Hat: "a-very-long-hat-name", Source: "somewhere", Iteration: 123456, Payload: json.RawMessage(`{"k":[1,2]}`)},
		{TS: benchgen.Start, Topic: "t", Hat: "héros", Iteration: -3, Payload: events.StringPayload("  ünïcode\n\ttext  " + strings.Repeat("é", 120))},
		{TS: benchgen.Start, Topic: "iteration.finished", Source: events.SourceRalph, Payload: json.RawMessage(`{"iteration":2,"hat":"builder","outcome":"success","duration_ms":1200}`)},
	}
	for _, ev := range evs {
		var want bytes.Buffer
		referenceRow(&want, events.Record{Event: ev}, false)
		p := &EventPrinter{Loc: time.UTC}
		require.Equal(t, want.String(), string(p.appendRow(nil, ev)))
	}
}

// The fast path's rows of ralph's bookkeeping lines are the slow path's,
// for payloads of every shape it decodes and the ones it must leave to
// encoding/json: wrong kinds, escapes, keys in another case, text to
// sanitize or clip.
func TestFastBookkeepingRowsMatchFmt(t *testing.T) {
	payloads := map[string][]string{
		runfiles.TopicIterationStarted: {
			`{"iteration":1,"hat":"builder","events":[1],"backend":"claude"}`,
			`{"iteration":2,"hat":"builder","events":[],"backend":""}`,
			`{"hat":"reviewer","events":null,"confirming":true}`,
			`{"hat":"reviewer","events":[1,2,3],"confirming":false,"backend":"codex"}`,
			`{"iteration":"3","hat":"builder","events":[1]}`,
			`{"iteration":3,"hat":"b\u0075ilder","events":[1]}`,
			`{"iteration":3,"Hat":"builder","events":[1]}`,
			`{"iteration":3,"hat":"builder","events":[1.5]}`,
			`{"iteration":3,"hat":"builder","events":[null,1]}`,
			`{"iteration":3,"hat":"builder","confirming":"yes"}`,
			`{"iteration":3,"hat":"héros","events":[1],"backend":"` + strings.Repeat("long ", 30) + `"}`,
			`{"iteration":3,"hat":"tab	hat","events":[1]}`,
			`{"iteration":3,"hat":"two  spaces","events":[1]}`,
			`{"iteration":3,"hat":"builder","events":[1],"extra":{"nested":[1,{"a":null}]}}`,
			`{}`,
		},
		runfiles.TopicIterationFinished: {
			`{"iteration":1,"hat":"builder","outcome":"success","exit_code":0,"duration_ms":1200,"tokens":{"input_tokens":900,"output_tokens":300},"cost_usd":0.01}`,
			`{"iteration":2,"hat":"builder","outcome":"failure","failure":"exit","message":"exit status 1","duration_ms":420000,"tokens":{"input_tokens":12000,"output_tokens":3000},"cost_usd":0.2}`,
			`{"hat":"builder","outcome":"failure","failure":"timeout","duration_ms":0,"tokens":null,"cost_usd":null}`,
			`{"hat":"builder","outcome":"success","duration_ms":999,"tokens":{"input_tokens":999999,"output_tokens":1},"cost_usd":1e-9}`,
			`{"hat":"builder","outcome":"success","duration_ms":999600,"tokens":{"input_tokens":1049999},"cost_usd":-0}`,
			`{"hat":"builder","outcome":"success","duration_ms":59600,"tokens":{"input_tokens":2500000000},"cost_usd":12345.67891}`,
			`{"hat":"builder","outcome":"success","duration_ms":3599600,"cost_usd":0.00005}`,
			`{"hat":"builder","outcome":"success","duration_ms":7260000}`,
			`{"hat":"builder","outcome":"success","duration_ms":-5}`,
			`{"hat":"builder","outcome":"success","duration_ms":-5000}`,
			`{"hat":"builder","outcome":"success","duration_ms":9223372036854}`,
			`{"hat":"builder","outcome":"success","duration_ms":1.5}`,
			`{"hat":"builder","outcome":"success","tokens":{"input_tokens":1,"cache_read_tokens":"x"}}`,
			`{"hat":"builder","outcome":"success","tokens":{"Input_Tokens":1}}`,
			`{"hat":"builder","outcome":"success","tokens":[1]}`,
			`{"hat":"builder","outcome":"success","cost_usd":"0.1"}`,
			`{"hat":"builder","outcome":"success","cost_usd":0.5,"cost_source":"computed","model":"gpt-5.5"}`,
			`{"hat":"builder","outcome":"success","cost_usd":0,"cost_source":"unknown","model":"fake-model"}`,
			`{"hat":"builder","outcome":"success","cost_usd":0.5,"cost_source":"reported"}`,
			`{"hat":"builder","outcome":"success","cost_usd":0.5,"cost_source":7}`,
			`{"hat":"builder","outcome":"success","cost_usd":1e400}`,
			`{"hat":"builder","outcome":"failure","failure":"exit","message":"line one\nline two\t\u001b[31mred"}`,
			`{"hat":"builder","outcome":"failure","failure":"exit","message":"` + strings.Repeat("é", 120) + `"}`,
		},
		runfiles.TopicEventRouted: {
			`{"offset":600,"topic":"build.task","to":["builder"]}`,
			`{"offset":600,"topic":"build.task","to":["builder","reviewer"]}`,
			`{"offset":600,"topic":"build.task","to":[]}`,
			`{"offset":600,"topic":"build.task"}`,
			`{"offset":600,"topic":"LOOP_COMPLETE","to":["ralph"],"as":"claim"}`,
			`{"offset":600,"topic":"LOOP_COMPLETE","as":"completion"}`,
			`{"offset":600,"topic":"LOOP_CANCEL","as":"cancellation"}`,
			`{"offset":600,"topic":"build.task","to":["builder"],"as":"route"}`,
			`{"offset":600,"topic":"build.task","to":["builder"],"as":"other"}`,
			`{"offset":600,"topic":"build.task","to":[null]}`,
			`{"offset":600,"topic":"build.task","to":"builder"}`,
			`{"offset":600,"topic":"build.task","to":["a\/b"]}`,
			`{"offset":600,"topic":"build.task","to":["builder"],"iteration":4,"hat":"builder"}`,
		},
	}
	for topic, list := range payloads {
		for _, payload := range list {
			for _, own := range []struct {
				iteration int
				hat       string
			}{{0, ""}, {7, ""}, {0, "own"}, {7, "own"}} {
				ev := events.Event{TS: benchgen.Start, Topic: topic, Source: events.SourceRalph, Payload: json.RawMessage(payload),
					Iteration: own.iteration, Hat: own.hat}
				var want bytes.Buffer
				referenceRow(&want, events.Record{Event: ev}, false)
				p := &EventPrinter{Loc: time.UTC}
				require.Equal(t, want.String(), string(p.appendRow(nil, ev)), "%s %s, own iteration %d and hat %q", topic, payload, own.iteration, own.hat)
			}
		}
	}
}

// The fast path's pieces are the slow path's functions.
func TestFastRowPiecesMatch(t *testing.T) {
	durations := []time.Duration{0, 1, time.Microsecond, 499 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
		999*time.Millisecond + 499*time.Microsecond, 999*time.Millisecond + 500*time.Microsecond, time.Second,
		59*time.Second + 499*time.Millisecond, 59*time.Second + 500*time.Millisecond, time.Minute, 61 * time.Second,
		time.Hour - 501*time.Millisecond, time.Hour - 500*time.Millisecond, time.Hour, 25*time.Hour + 30*time.Second,
		-1, -time.Second, -time.Hour, time.Duration(1<<63 - 1), time.Duration(-1 << 63)}
	for i := range 20000 {
		durations = append(durations, time.Duration(i)*time.Duration(i)*time.Duration(i)*997*time.Microsecond)
	}
	for _, d := range durations {
		require.Equal(t, humanDuration(d), string(appendHumanDuration(nil, d)), "%d", d)
	}
	counts := []int64{0, 1, -1, 999, 1000, 1049, 1050, 999949, 999950, 1_000_000, 1_049_999, -5000, 1<<63 - 1}
	for i := range 20000 {
		counts = append(counts, int64(i)*int64(i)*int64(i)*7)
	}
	for _, n := range counts {
		require.Equal(t, humanCount(n), string(appendHumanCount(nil, n)), "%d", n)
	}
	cells := []string{"", "a", " a", "a ", "a  b", "a b", "a\tb", "a\nb", "\u00a0a", "a\u2003b", "é", "→", "\x1b[31m", "\x7f", "\u0085",
		"\ufffd", "\xff", "bad \xc3", strings.Repeat("a", 100), strings.Repeat("a", 101), strings.Repeat("é", 100), strings.Repeat("é", 101)}
	for _, c := range cells {
		if plainCell([]byte(c), 100) {
			require.Equal(t, c, Clip(Sanitize(c), 100), "%q is plain", c)
		}
	}
	for _, c := range []string{"", "a b", "é → b", strings.Repeat("é", 100)} {
		require.True(t, plainCell([]byte(c), 100), "%q", c)
	}
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("x", -3*3600-1800), time.Local} {
		for i := range 1000 {
			ts := benchgen.Start.Add(time.Duration(i) * 7919 * time.Second)
			require.Equal(t, ts.In(loc).Format("15:04:05"), string(appendClock(nil, ts.In(loc))))
		}
	}
}

package events_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func BenchmarkAppend(b *testing.B) {
	log, err := events.OpenLog(filepath.Join(b.TempDir(), "events.jsonl"))
	require.NoError(b, err)
	defer log.Close()
	ev := events.Event{Topic: "build.done", Payload: events.StringPayload("tests: pass"), Iteration: 3, Hat: "builder", Source: events.SourceAgent}
	b.ReportAllocs()
	for b.Loop() {
		if err := log.Append(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// writeBenchLog writes n typical lines and returns the path and size.
func writeBenchLog(b *testing.B, n int) (string, int64) {
	b.Helper()
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `{"ts":"2026-11-22T10:00:00.123456789Z","topic":"build.done","payload":"tests: pass, run %d","iteration":%d,"hat":"builder","source":"agent"}`+"\n", i, i/10)
	}
	path := filepath.Join(b.TempDir(), "events.jsonl")
	require.NoError(b, os.WriteFile(path, buf.Bytes(), 0o644))
	return path, int64(buf.Len())
}

func BenchmarkReaderRead(b *testing.B) {
	const lines = 100_000
	path, size := writeBenchLog(b, lines)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		recs, err := events.NewReader(path, 0).Read()
		if err != nil || len(recs) != lines {
			b.Fatalf("read %d records: %v", len(recs), err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	const lines = 100_000
	path, size := writeBenchLog(b, lines)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		require.NoError(b, err)
		n := 0
		err = events.Scan(f, func(events.Record) error { n++; return nil })
		_ = f.Close()
		if err != nil || n != lines {
			b.Fatalf("scanned %d records: %v", n, err)
		}
	}
}

// benchAgentText is a final message of realistic shape: prose, code blocks,
// an example tag in a fence and two real tags.
func benchAgentText() string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "Step %d: I read the code and changed a few things; a < b && c > d.\n", i)
		b.WriteString("```go\nfunc f() error {\n\treturn nil\n}\n```\n")
	}
	b.WriteString("~~~\n<event topic=\"example\">not real</event>\n~~~\n")
	b.WriteString("<event topic=\"build.done\">\ntests: pass\nlint: pass\n</event>\n")
	b.WriteString("<event topic='review.request' target=\"reviewer\">please review</event>\n")
	return b.String()
}

func BenchmarkParseTags(b *testing.B) {
	text := benchAgentText()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if tags := events.ParseTags(text); len(tags) != 2 {
			b.Fatalf("got %d tags", len(tags))
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	cases := []struct{ pattern, topic string }{
		{"*", "build.done"},
		{"build.done", "build.done"},
		{"build.done", "build.failed"},
		{"task.*", "task.start"},
		{"*.done", "review.code.done"},
		{"review.*.done", "review.code.done"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			events.Match(c.pattern, c.topic)
		}
	}
}

func BenchmarkBusRoute(b *testing.B) {
	router := events.NewRouter([]events.Subscription{
		{Hat: "planner", Triggers: []string{"task.start", "build.blocked"}},
		{Hat: "builder", Triggers: []string{"build.task", "review.rejected"}},
		{Hat: "reviewer", Triggers: []string{"*.done"}},
		{Hat: "fallback", Triggers: []string{"*"}},
	})
	ev := events.Event{Topic: "build.done"}
	b.ReportAllocs()
	for b.Loop() {
		router.Route(ev)
	}
}

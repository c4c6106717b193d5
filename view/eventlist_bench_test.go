package view

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/ralph-loop/ralph/internal/benchgen"
)

// benchLog writes a generated log once per benchmark and returns its path
// and size.
func benchLog(b *testing.B, lines int) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "events.jsonl")
	size, err := benchgen.WriteFile(path, lines)
	if err != nil {
		b.Fatal(err)
	}
	return path, size
}

// benchList lists the log once per iteration, reporting MB/s of the log
// (for --last too, though it reads only the end: its MB/s grows with the
// log, which is the point).
func benchList(b *testing.B, f EventFilter, last int, jsonOut bool) {
	path, size := benchLog(b, 200_000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		p := &EventPrinter{W: io.Discard, JSON: jsonOut, Loc: benchgen.Start.Location()}
		l := EventListing{Printer: p, Filter: f, Last: last}
		if err := l.List(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEventsListTopicJSON(b *testing.B) {
	benchList(b, EventFilter{Topic: "build.done"}, 0, true)
}

func BenchmarkEventsListTopicTable(b *testing.B) {
	benchList(b, EventFilter{Topic: "build.done"}, 0, false)
}

func BenchmarkEventsListGlobJSON(b *testing.B) {
	benchList(b, EventFilter{Topic: "*.done"}, 0, true)
}

func BenchmarkEventsListHatJSON(b *testing.B) {
	benchList(b, EventFilter{Hat: "builder"}, 0, true)
}

func BenchmarkEventsListAllJSON(b *testing.B) {
	benchList(b, EventFilter{}, 0, true)
}

func BenchmarkEventsListLastTable(b *testing.B) {
	benchList(b, EventFilter{Topic: "build.done"}, 5, false)
}

func BenchmarkEventsListAllTable(b *testing.B) {
	benchList(b, EventFilter{}, 0, false)
}

package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ralph-loop/ralph/internal/benchgen"
)

// BenchmarkEventsTopic measures `ralph events --topic` on a generated log of
// a million lines (about 186 MB), as a real process, next to jq doing the
// same selection on the same file. Each iteration is one full scan, so
// -benchtime=1x gives one measurement of each. Besides ns/op and MB/s it
// reports the process's peak resident memory (maxrss-MB): ralph streams,
// so it stays flat whatever the log's size.
//
//	go test -run '^$' -bench EventsTopic -benchtime=1x ./cmd/ralph/
func BenchmarkEventsTopic(b *testing.B) {
	const lines = 1_000_000
	dir := b.TempDir()
	size := writeBigLog(b, dir, lines) // once, before any timer runs
	log := filepath.Join(dir, ".ralph", "events-20261122-100000.jsonl")
	want := lines / len(benchgen.Cycle) // one build.done per cycle

	b.Run("ralph-json", func(b *testing.B) {
		benchProcess(b, dir, size, want, ralphBin, "events", "--topic", "build.done", "--json")
	})
	b.Run("ralph-table", func(b *testing.B) {
		benchProcess(b, dir, size, want+1, ralphBin, "events", "--topic", "build.done") // +1: the header
	})
	b.Run("jq", func(b *testing.B) {
		jq, err := exec.LookPath("jq")
		if err != nil {
			b.Skip("jq is not installed")
		}
		benchProcess(b, dir, size, want, jq, "-c", `select(.topic=="build.done")`, log)
	})
}

// benchProcess runs the program once per iteration, checks it printed want
// lines, and reports throughput and the largest peak RSS seen.
func benchProcess(b *testing.B, dir string, size int64, want int, name string, args ...string) {
	b.SetBytes(size)
	var peak int64
	for b.Loop() {
		var out countingWriter
		rss, exact := runMeasured(b, dir, &out, name, args...)
		if !exact {
			b.Log("GNU time is not installed: maxrss-MB includes the test process's own peak")
		}
		peak = max(peak, rss)
		if out.lines != want {
			b.Fatalf("%s printed %d lines, want %d", name, out.lines, want)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "maxrss-MB")
}

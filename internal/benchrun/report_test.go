package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGoBenchAndTargets(t *testing.T) {
	out := `goos: linux
BenchmarkScan-2            	      20	  51234567 ns/op	 410.21 MB/s	 1024 B/op	       3 allocs/op
BenchmarkParseCodex-2      	      10	 160000000 ns/op	 143.90 MB/s	54700000 B/op	  100 allocs/op
BenchmarkAppend            	  100000	     12345 ns/op	     200 B/op	       2 allocs/op
PASS
`
	got := parseGoBench(out)
	require.Len(t, got, 3)
	assert.Equal(t, goBenchmark{name: "BenchmarkScan", perOp: "51.234567ms", throughput: "410.21 MB/s", mbps: 410.21, allocs: "3"}, got[0])
	assert.Equal(t, "BenchmarkAppend", got[2].name)

	r := &report{goBench: got}
	figs := r.throughputFigures()
	require.Len(t, figs, 2, "only the benchmarks with a throughput target")
	assert.True(t, figs[0].met, "410 MB/s meets 300")
	assert.False(t, figs[1].met, "144 MB/s misses 200")
	assert.Contains(t, r.markdown(), "| stream parser (BenchmarkParseCodex) | 143.90 MB/s | ≥ 200 MB/s | **no** |")
}

// A missed target is listed with why, from the profile recorded for it; a
// met one and a figure shown for comparison are not.
func TestMissedTargetsAreExplained(t *testing.T) {
	r := &report{sections: []section{{title: "events", figures: []figure{
		{name: "ralph events (table), every line", value: "1.53×", target: "≤ 1.25×"},
		{name: "ralph events peak memory", value: "16 MiB", target: "< 64 MiB", met: true},
		{name: "something new", value: "3", target: "≤ 2"},
		{name: "system calls per iteration", value: "1 fsync", target: "what is needed", info: true},
	}}}}
	md := r.markdown()
	assert.Contains(t, md, "## Targets missed")
	assert.Contains(t, md, "- **ralph events (table), every line** (1.53×; target ≤ 1.25×). Profiled with")
	assert.Contains(t, md, "- **something new** (3; target ≤ 2). No profile recorded")
	assert.NotContains(t, md, "- **ralph events peak memory**")
	assert.NotContains(t, md, "- **system calls per iteration**")
	assert.Contains(t, md, "| system calls per iteration | 1 fsync | what is needed | — |")
}

func TestParseGoBenchKeepsABenchmarksOwnFigures(t *testing.T) {
	got := parseGoBench("BenchmarkClusterThroughput-2   1   30000000000 ns/op   20.10 s-1worker/op   7.50 s-3workers/op   2.68 speedup   5000 B/op   100 allocs/op\n")
	require.Len(t, got, 1)
	assert.Equal(t, []string{"20.10 s-1worker/op", "7.50 s-3workers/op", "2.68 speedup"}, got[0].metrics)
}

func TestABenchmarksOwnFiguresStandBesideTheirTargets(t *testing.T) {
	r := &report{goBench: parseGoBench("BenchmarkSSEFanout200-2   464   2331026 ns/op   27.12 KiB/client   1531 cpu-µs/line   2.000 inotify\n")}
	md := r.markdown()
	assert.Contains(t, md, "| ralph serve, 200 streams of one growing log: kernel watchers | 2 | one for all | **no** |")
	assert.Contains(t, md, "| ralph serve, 200 streams of one growing log: CPU per appended line | 1531 µs (7.7 µs a stream) | reported")
	assert.Contains(t, md, "| ralph serve, 200 streams of one growing log: memory per stream | 27.1 KiB | reported")
}

func TestALongRunSaysHowToRunItAndItsFiguresWhenRun(t *testing.T) {
	md := (&report{}).markdown()
	assert.Contains(t, md, "## Cluster scale")
	assert.Contains(t, md, "RALPH_BENCH_CLUSTER_TASKS=1000 go test")
	assert.Contains(t, md, "Not run this time (RALPH_BENCH_CLUSTER_TASKS=0).")
	assert.Contains(t, md, "Earlier runs, by hand")

	r := &report{goBench: parseGoBench("BenchmarkClusterScale-2   1   60000000000 ns/op   250 coordinator-cpu-ms/task   83.3 efficiency-%   40 tasks   2 agent-s   16.67 tasks/s\n")}
	md = r.markdown()
	assert.Contains(t, md, "| cluster of 10 workers × 4 slots: efficiency against the ideal | 83.3% | ≥ 90% | **no** |")
	assert.Contains(t, md, "| cluster of 10 workers × 4 slots: tasks per second | 16.67 | reported")
	assert.Contains(t, md, "These figures are of 40 tasks with 2 s agents.")
	assert.NotContains(t, md, "Not run this time")
}

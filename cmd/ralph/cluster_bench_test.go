package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/natstest"
)

// BenchmarkClusterThroughput runs eight tasks whose agent takes 2 s each
// through `ralph autopilot --cluster` on one embedded server, with one
// worker and then with three, and reports both wall times and their ratio:
// what workers gain net of the queue, the pushes, fetches and merges.
func BenchmarkClusterThroughput(b *testing.B) {
	var one, three time.Duration
	for range b.N {
		one += runClusterTasks(b, 1)
		three += runClusterTasks(b, 3)
	}
	n := time.Duration(b.N)
	b.ReportMetric((one / n).Seconds(), "s-1worker/op")
	b.ReportMetric((three / n).Seconds(), "s-3workers/op")
	b.ReportMetric(float64(one)/float64(three), "speedup")
}

func runClusterTasks(b *testing.B, workers int) time.Duration {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	servers := natstest.StartCluster(b, 1)
	var ids []string
	for i := range 8 {
		ids = append(ids, fmt.Sprintf("T%d", i+1))
	}
	w, remote := newClusterRepo(b, "  parallel: 3\n", ids)
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); sleep 2; echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	for i := range workers {
		w.startWorker(fmt.Sprintf("w%d", i+1), servers.URLs(), remote, 1)
	}
	b.StartTimer()
	start := time.Now()
	r := w.ralph("autopilot", "--cluster", servers.URLs())
	elapsed := time.Since(start)
	b.StopTimer()
	if r.code != 0 {
		b.Fatalf("autopilot exited %d: %s", r.code, r.stderr)
	}
	return elapsed
}

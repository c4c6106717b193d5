package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkAutopilotParallel runs four tasks whose agent takes 2 s each,
// one slot at a time and then two, through the real binary, and reports
// both wall times and their ratio: the gain of parallel slots, net of
// worktrees, merges and ralph's bookkeeping.
func BenchmarkAutopilotParallel(b *testing.B) {
	var serial, parallel time.Duration
	for range b.N {
		serial += runFourTasks(b, 1)
		parallel += runFourTasks(b, 2)
	}
	n := time.Duration(b.N)
	b.ReportMetric((serial / n).Seconds(), "s-serial/op")
	b.ReportMetric((parallel / n).Seconds(), "s-parallel2/op")
	b.ReportMetric(float64(serial)/float64(parallel), "speedup")
}

func runFourTasks(b *testing.B, parallel int) time.Duration {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	w := newAutopilotRepo(b, "  source: {type: checklist, path: TODO.md}\n")
	var items []string
	for i := range 4 {
		items = append(items, fmt.Sprintf("- [ ] Task %d", i+1))
	}
	w.write("TODO.md", strings.Join(items, "\n")+"\n")
	git(w.t, w.dir, "add", "-A")
	git(w.t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{
		Sh:     `task=$(basename "$PWD"); sleep 2; echo "$task" > "$task.txt"`,
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	b.StartTimer()
	start := time.Now()
	r := w.ralph("autopilot", "--parallel", fmt.Sprint(parallel))
	elapsed := time.Since(start)
	b.StopTimer()
	if r.code != 0 {
		b.Fatalf("autopilot exited %d: %s", r.code, r.stderr)
	}
	return elapsed
}

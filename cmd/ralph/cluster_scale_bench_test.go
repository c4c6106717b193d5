package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/natstest"
)

// clusterScaleEnv sets how many tasks BenchmarkClusterScale runs; unset,
// it is skipped: the full run (1,000 tasks) takes minutes.
const clusterScaleEnv = "RALPH_BENCH_CLUSTER_TASKS"

// The shape of BenchmarkClusterScale's cluster: ten workers of four slots,
// each task's agent taking two seconds.
const (
	scaleWorkers = 10
	scaleSlots   = 4
	scaleAgent   = 2 * time.Second
)

// BenchmarkClusterScale runs RALPH_BENCH_CLUSTER_TASKS trivial tasks (each
// agent sleeps 2 s, writes a file and commits) through `ralph autopilot
// --cluster` with 40 slots: ten `ralph worker`s of four slots each, against
// an embedded cluster of three JetStream servers, all on this machine. It
// checks that every task was merged once and closed, and reports tasks/s,
// the coordinator's CPU per task (the autopilot process and the git it
// ran) and efficiency: the ideal time (tasks × agent time / slots) over
// the time taken.
//
//	RALPH_BENCH_CLUSTER_TASKS=1000 go test -run '^$' -bench ClusterScale -benchtime 1x -timeout 60m ./cmd/ralph/
func BenchmarkClusterScale(b *testing.B) {
	n, err := strconv.Atoi(os.Getenv(clusterScaleEnv))
	if err != nil || n < 1 {
		b.Skipf("set %s to the number of tasks (1000 for the full run) to run it", clusterScaleEnv)
	}
	var elapsed, cpu, start, merge time.Duration
	for range b.N {
		e, c, p := runClusterScale(b, n)
		elapsed, cpu = elapsed+e, cpu+c
		start, merge = start+p.start, merge+p.merge
		b.Logf("per task: start %v, loop %v, queued for the merge %v, merge and close %v (%d tasks)", p.start, p.loop, p.queued, p.merge, p.tasks)
	}
	runs := float64(b.N)
	ideal := time.Duration(n) * scaleAgent / (scaleWorkers * scaleSlots)
	b.ReportMetric(float64(n)*runs/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(float64(cpu.Milliseconds())/(float64(n)*runs), "coordinator-cpu-ms/task")
	b.ReportMetric(100*ideal.Seconds()*runs/elapsed.Seconds(), "efficiency-%")
	// What the coordinator's one goroutine spends on each task alone; the
	// ideal leaves it 50 ms a task (2 s agents over 40 slots).
	b.ReportMetric(float64(start.Milliseconds())/runs, "start-ms/task")
	b.ReportMetric(float64(merge.Milliseconds())/runs, "merge-ms/task")
}

func runClusterScale(b *testing.B, n int) (elapsed, cpu time.Duration, phases clusterPhases) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	servers := natstest.StartCluster(b, 3)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("T%04d", i+1)
	}
	w, remote := newClusterRepo(b, fmt.Sprintf("  parallel: %d\n  cluster:\n    replicas: 3\n", scaleWorkers*scaleSlots), ids)
	w.script(agentScript{Steps: []step{{
		Sh:     fmt.Sprintf(`task=$(basename "$PWD"); sleep %d; echo "$task" > "$task.txt"`, int(scaleAgent.Seconds())),
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	for i := range scaleWorkers {
		w.startWorkerSlots(fmt.Sprintf("w%d", i+1), servers.URLs(), remote, 3, scaleSlots)
	}
	b.StartTimer()
	start := time.Now()
	cmd, log := w.startRalph("autopilot", "--cluster", servers.URLs())
	err := cmd.Wait()
	elapsed = time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatalf("autopilot: %v\n%s", err, log.String())
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	assertEachMergedOnceAndClosed(b, w, ids)
	return elapsed, cpu, readClusterPhases(b, w.dir)
}

// assertEachMergedOnceAndClosed fails b unless main's history names each
// task as merged exactly once and prd.json has every task passing.
func assertEachMergedOnceAndClosed(b *testing.B, w *workspace, ids []string) {
	b.Helper()
	history := git(b, w.dir, "log", "--format=%B", "main")
	for _, id := range ids {
		if got := strings.Count(history, "Ralph-Task: "+id+"\n"); got != 1 {
			b.Errorf("%s is merged %d times", id, got)
		}
	}
	var prd struct {
		UserStories []struct {
			ID     string
			Passes bool
		}
	}
	if err := json.Unmarshal([]byte(w.read("prd.json")), &prd); err != nil {
		b.Fatal(err)
	}
	if len(prd.UserStories) != len(ids) {
		b.Errorf("prd.json holds %d tasks, not %d", len(prd.UserStories), len(ids))
	}
	for _, s := range prd.UserStories {
		if !s.Passes {
			b.Errorf("%s is not closed in prd.json", s.ID)
		}
	}
}

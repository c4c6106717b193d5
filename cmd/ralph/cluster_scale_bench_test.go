package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/natstest"
)

// clusterScaleEnv sets how many tasks BenchmarkClusterScale runs; unset,
// it is skipped: the full run (1,000 tasks) takes minutes.
const clusterScaleEnv = "RALPH_BENCH_CLUSTER_TASKS"

// clusterAgentEnv, when set, is how many seconds each task's agent takes
// in BenchmarkClusterScale instead of 2: a longer agent shows how much of
// the efficiency missed is a fixed cost a task, which it hides.
const clusterAgentEnv = "RALPH_BENCH_CLUSTER_AGENT_SECONDS"

// The shape of BenchmarkClusterScale's cluster: ten workers of four slots,
// each task's agent taking two seconds unless clusterAgentEnv says.
const (
	scaleWorkers = 10
	scaleSlots   = 4
)

// scaleAgent is how long each task's agent takes.
func scaleAgent(b *testing.B) time.Duration {
	b.Helper()
	v := os.Getenv(clusterAgentEnv)
	if v == "" {
		return 2 * time.Second
	}
	secs, err := strconv.Atoi(v)
	if err != nil || secs < 0 {
		b.Fatalf("%s=%q: want a whole number of seconds, such as 20", clusterAgentEnv, v)
	}
	return time.Duration(secs) * time.Second
}

// BenchmarkClusterScale runs RALPH_BENCH_CLUSTER_TASKS trivial tasks (each
// agent sleeps 2 s, writes a file and commits) through `ralph autopilot
// --cluster` with 40 slots: ten `ralph worker`s of four slots each, against
// an embedded cluster of three JetStream servers, all on this machine. It
// checks that every task was merged once and closed, and reports tasks/s,
// the coordinator's CPU per task (the autopilot process and the git it
// ran) and efficiency: the ideal time (tasks × agent time / slots) over
// the time taken.
//
// It also reports the coordinator's serial time a task (start-ms/task,
// merge-ms/task; see clusterPhases), and logs the rest with -v.
//
//	RALPH_BENCH_CLUSTER_TASKS=1000 go test -run '^$' -bench ClusterScale -benchtime 1x -timeout 60m ./cmd/ralph/
func BenchmarkClusterScale(b *testing.B) {
	n, err := strconv.Atoi(os.Getenv(clusterScaleEnv))
	if err != nil || n < 1 {
		b.Skipf("set %s to the number of tasks (1000 for the full run) to run it", clusterScaleEnv)
	}
	var total clusterRun
	for range b.N {
		r := runClusterScale(b, n)
		total.elapsed, total.coordinator, total.workers, total.servers = total.elapsed+r.elapsed, total.coordinator+r.coordinator,
			total.workers+r.workers, total.servers+r.servers
		total.phases.start, total.phases.merge = total.phases.start+r.phases.start, total.phases.merge+r.phases.merge
		p := r.phases
		b.Logf("per task: start %v, loop %v, queued for the merge %v, merge and close %v (%d tasks)", p.start, p.loop, p.queued, p.merge, p.tasks)
	}
	runs := float64(b.N)
	perTask := func(d time.Duration) float64 { return float64(d.Milliseconds()) / (float64(n) * runs) }
	ideal := time.Duration(n) * scaleAgent(b) / (scaleWorkers * scaleSlots)
	// What was run, for the report to say of its figures.
	b.ReportMetric(float64(n), "tasks")
	b.ReportMetric(scaleAgent(b).Seconds(), "agent-s")
	b.ReportMetric(float64(n)*runs/total.elapsed.Seconds(), "tasks/s")
	b.ReportMetric(perTask(total.coordinator), "coordinator-cpu-ms/task")
	b.ReportMetric(100*ideal.Seconds()*runs/total.elapsed.Seconds(), "efficiency-%")
	// What the coordinator's one goroutine spends on each task alone; the
	// ideal leaves it 50 ms a task (2 s agents over 40 slots).
	b.ReportMetric(float64(total.phases.start.Milliseconds())/runs, "start-ms/task")
	b.ReportMetric(float64(total.phases.merge.Milliseconds())/runs, "merge-ms/task")
	// The CPU of everything else a task costs, on the same machine: the
	// workers with their loops, agents and git, and this process, which
	// is mostly the three servers. Their sum over the machine's cores is
	// the least wall time a task can take here, whatever the coordinator.
	b.ReportMetric(perTask(total.workers), "workers-cpu-ms/task")
	b.ReportMetric(perTask(total.servers), "servers-cpu-ms/task")
	b.ReportMetric(perTask(total.coordinator+total.workers+total.servers)/float64(runtime.NumCPU()), "cpu-bound-ms/task")
}

// clusterRun is what one run of BenchmarkClusterScale took: its wall
// time, the CPU of the coordinator, of the workers and of this process
// (the servers), each with the processes it waited for, and where the
// coordinator's time went.
type clusterRun struct {
	elapsed, coordinator, workers, servers time.Duration
	phases                                 clusterPhases
}

func runClusterScale(b *testing.B, n int) clusterRun {
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
		Sh:     fmt.Sprintf(`task=$(basename "$PWD"); sleep %d; echo "$task" > "$task.txt"`, int(scaleAgent(b).Seconds())),
		Commit: "do the task",
		Say:    `<event topic="LOOP_COMPLETE">done</event>`,
	}}})
	workers := make([]*clusterWorker, scaleWorkers)
	for i := range workers {
		workers[i] = w.startWorkerSlots(fmt.Sprintf("w%d", i+1), servers.URLs(), remote, 3, scaleSlots)
	}
	b.StartTimer()
	before := selfCPU(b)
	start := time.Now()
	cmd, log := w.startRalph("autopilot", "--cluster", servers.URLs())
	err := cmd.Wait()
	r := clusterRun{elapsed: time.Since(start), servers: selfCPU(b) - before}
	b.StopTimer()
	if err != nil {
		b.Fatalf("autopilot: %v\n%s", err, log.String())
	}
	r.coordinator = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	for _, cw := range workers {
		// Idle now: a worker asked to stop ends at once, and its CPU is
		// known once it has been waited for.
		_ = cw.cmd.Process.Signal(syscall.SIGTERM)
		_ = cw.cmd.Wait()
		if cw.cmd.ProcessState != nil {
			r.workers += cw.cmd.ProcessState.UserTime() + cw.cmd.ProcessState.SystemTime()
		}
	}
	assertEachMergedOnceAndClosed(b, w, ids)
	r.phases = readClusterPhases(b, w.dir)
	return r
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

package main

import (
	"fmt"
	"strings"
)

// metricTarget is a figure a Go benchmark reports itself (b.ReportMetric),
// shown in the summary beside its target.
type metricTarget struct {
	bench, unit string
	name        string
	target      string
	// value says the figure as the summary shows it.
	value func(v float64) string
	// met says whether v meets the target; nil shows the figure for
	// comparison only.
	met func(v float64) bool
}

// metricTargets are the Go benchmarks' own figures with a target.
var metricTargets = []metricTarget{
	{bench: "BenchmarkSSEFanout200", unit: "inotify", name: "ralph serve, 200 streams of one growing log: kernel watchers",
		target: "one for all", value: func(v float64) string { return fmt.Sprintf("%.0f", v) },
		met: func(v float64) bool { return v == 1 }},
	{bench: "BenchmarkSSEFanout200", unit: "cpu-µs/line", name: "ralph serve, 200 streams of one growing log: CPU per appended line",
		target: "reported: the log read and decoded once, then one write per stream",
		value:  func(v float64) string { return fmt.Sprintf("%.0f µs (%.1f µs a stream)", v, v/200) }},
	{bench: "BenchmarkSSEFanout200", unit: "KiB/client", name: "ralph serve, 200 streams of one growing log: memory per stream",
		target: "reported: heap and stacks per open stream",
		value:  func(v float64) string { return fmt.Sprintf("%.1f KiB", v) }},
}

// metricFigures are the figures of metricTargets the Go benchmarks
// reported.
func (r *report) metricFigures() []figure {
	var out []figure
	for _, t := range metricTargets {
		for _, g := range r.goBench {
			v, ok := g.values[t.unit]
			if g.name != t.bench || !ok {
				continue
			}
			f := figure{name: t.name, value: t.value(v), target: t.target, info: t.met == nil}
			if t.met != nil {
				f.met = t.met(v)
			}
			out = append(out, f)
		}
	}
	return out
}

// longRun is a Go benchmark too long to run at full size in every `make
// bench`: `make bench` runs it small (its variable set to a default; the
// environment overrides it), and its section says how to run it at full
// size and what size its figures are of.
type longRun struct {
	title, what, bench string
	env, command       string
	// size says what the benchmark's reported metrics say was run.
	size func(metrics map[string]float64) string
	// earlier are figures of runs made by hand, at sizes too long for
	// `make bench`, kept beside the ones each run measures.
	earlier string
}

var longRuns = []longRun{{
	title: "Cluster scale",
	what: "Trivial tasks (each agent sleeps 2 s, writes a file and commits) through `ralph autopilot --cluster` with " +
		"ten `ralph worker`s of four slots each, against an embedded cluster of three JetStream servers, all on this machine; " +
		"every task checked merged exactly once and closed. The ideal is tasks × 2 s / 40 slots (50 s for 1,000). " +
		"`make bench` runs 40 tasks, one round of the slots; RALPH_BENCH_CLUSTER_TASKS sets another count, " +
		"RALPH_BENCH_CLUSTER_AGENT_SECONDS the agent's time.",
	bench: "BenchmarkClusterScale", env: "RALPH_BENCH_CLUSTER_TASKS",
	command: "RALPH_BENCH_CLUSTER_TASKS=1000 go test -run '^$' -bench ClusterScale -benchtime 1x -timeout 60m ./cmd/ralph/",
	size: func(m map[string]float64) string {
		if m["tasks"] == 0 {
			return ""
		}
		return fmt.Sprintf("These figures are of %s tasks with %.0f s agents.", thousands(int(m["tasks"])), m["agent-s"])
	},
	earlier: "Earlier runs, by hand (one each, on this 2-core machine shared with other work): " +
		"40 tasks with 20 s agents (RALPH_BENCH_CLUSTER_AGENT_SECONDS=20) reached 79.5% after the workers fetched only a task's " +
		"start, pushed a finished task once and reused worktrees (59.0% before, back to back at a load of 4 to 7). With 200 " +
		"tasks: 2.87 tasks/s against 1.86 before those changes, 211 ms a task over the cores against 249. The run of 1,000, " +
		"before them, finished with every task merged once and closed in 1,254 s (0.80 tasks/s, efficiency 4.0%) under a " +
		"load average of 26 to 36, with 329 ms of the coordinator's CPU a task, 451 ms of the workers' and 42 ms of the " +
		"servers' (411 ms a task over the 2 cores); per task, its start took 0.41 s (the first 200) to 0.96 s (the last 200) " +
		"on the coordinator's goroutine, its loop 19 to 26 s on its worker, its merge and close 0.9 to 1.6 s.",
}}

// wholeMS says a figure in milliseconds to the millisecond: the cluster's
// per-task figures are tens of milliseconds or more, and noisier than a
// fraction of one.
func wholeMS(v float64) string { return fmt.Sprintf("%.0f ms", v) }

func init() {
	metricTargets = append(metricTargets,
		metricTarget{bench: "BenchmarkClusterScale", unit: "efficiency-%", name: "cluster of 10 workers × 4 slots: efficiency against the ideal",
			target: "≥ 90%", value: func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, met: func(v float64) bool { return v >= 90 }},
		metricTarget{bench: "BenchmarkClusterScale", unit: "tasks/s", name: "cluster of 10 workers × 4 slots: tasks per second",
			target: "reported (the ideal: 20 tasks/s)", value: func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		metricTarget{bench: "BenchmarkClusterScale", unit: "coordinator-cpu-ms/task", name: "cluster of 10 workers × 4 slots: the coordinator's CPU per task",
			target: "reported (the autopilot process and the git it ran)", value: wholeMS},
		metricTarget{bench: "BenchmarkClusterScale", unit: "start-ms/task", name: "cluster of 10 workers × 4 slots: a task's start on the coordinator's goroutine",
			target: "reported (task.assigned to task.running; the ideal leaves 50 ms for start and merge)", value: wholeMS},
		metricTarget{bench: "BenchmarkClusterScale", unit: "merge-ms/task", name: "cluster of 10 workers × 4 slots: a task's merge and close",
			target: "reported (merge.started to task.completed, one task at a time)", value: wholeMS},
		metricTarget{bench: "BenchmarkClusterScale", unit: "workers-cpu-ms/task", name: "cluster of 10 workers × 4 slots: the workers' CPU per task",
			target: "reported (the workers, their loops, agents and git)", value: wholeMS},
		metricTarget{bench: "BenchmarkClusterScale", unit: "servers-cpu-ms/task", name: "cluster of 10 workers × 4 slots: the servers' CPU per task",
			target: "reported (the benchmark's process: the three JetStream servers)", value: wholeMS},
		metricTarget{bench: "BenchmarkClusterScale", unit: "cpu-bound-ms/task", name: "cluster of 10 workers × 4 slots: all that CPU over the machine's cores",
			target: "reported (the least wall time a task can take on this machine; the ideal is 50 ms)", value: wholeMS},
	)
}

// writeLongRuns writes each long run's section: its command, and its
// figures when this report's Go benchmarks include it.
func (r *report) writeLongRuns(b *strings.Builder) {
	for _, l := range longRuns {
		fmt.Fprintf(b, "\n## %s\n\n%s\n\n```sh\n%s\n```\n\n", l.title, l.what, l.command)
		var figs []figure
		for _, f := range r.metricFigures() {
			for _, t := range metricTargets {
				if t.bench == l.bench && t.name == f.name {
					figs = append(figs, f)
				}
			}
		}
		if len(figs) == 0 {
			fmt.Fprintf(b, "Not run this time (%s=0).\n", l.env)
		} else {
			b.WriteString("| figure | value | target |\n| --- | --- | --- |\n")
			for _, f := range figs {
				fmt.Fprintf(b, "| %s | %s | %s |\n", f.name, f.value, f.target)
			}
			if size := l.size(r.benchValues(l.bench)); size != "" {
				fmt.Fprintf(b, "\n%s\n", size)
			}
		}
		if l.earlier != "" {
			fmt.Fprintf(b, "\n%s\n", l.earlier)
		}
	}
}

// benchValues are the metrics the Go benchmark named reported, none when
// it did not run.
func (r *report) benchValues(name string) map[string]float64 {
	for _, g := range r.goBench {
		if g.name == name {
			return g.values
		}
	}
	return nil
}

func init() {
	whyMissed["cluster of 10 workers × 4 slots: efficiency against the ideal"] = "The machine, before the coordinator: " +
		"the CPU a task costs all the processes of the run (the coordinator, the workers with their loops, agents and git, " +
		"the three servers), over this machine's 2 cores, is 145 to 200 ms a task at 40 tasks under a load average of 7 to " +
		"23 from other work (cpu-bound-ms/task; 155 to 270 before a worker fetched only a task's start, pushed a finished " +
		"task once, reused worktrees and stopped scanning every process for its loop's lock, run back to back), about three " +
		"times the 50 ms a task the ideal allows; the workers' share is 165 to 225 ms of CPU (180 to 320 before): a git " +
		"process costs more CPU the busier the cores. A worker now starts 18 processes a task of its own (38 before: " +
		"strace -f) and its loop 22 (the loop, its sandbox's ralph, the agent and their git), so most of the workers' CPU " +
		"is the loop's; the coordinator starts 39 (49 before), for its worktree here, the start's push, the result's " +
		"fetch, the merge, the tracker's close and the clean-up's push. Each loop took 4 to 9 s on its worker for a 2 s " +
		"agent. At 200 tasks, where nearly every task reuses a worktree, it is 2.87 tasks/s against 1.86 (cpu-bound 211 ms " +
		"against 249). With 20 s agents (RALPH_BENCH_CLUSTER_AGENT_SECONDS=20) 40 tasks reach 79.5% (59.0% before, back " +
		"to back at a load of 4 to 7). The coordinator's own serial path (start-ms/task, merge-ms/task, timed from its " +
		"log) is 75 to 270 ms each at 40 tasks under that load, most of it the task's worktree here (`git worktree add`) " +
		"and the git of the merge, the move of the base branch and the tracker's close commit. On the machine idle, 40 " +
		"tasks reach 32.4-38.0% (6.48-7.60 tasks/s, 115-144 ms a task over the cores; three runs); there merge-ms/task counts the time a " +
		"merge made on the one under way waits to land with it, not work of its own."
}

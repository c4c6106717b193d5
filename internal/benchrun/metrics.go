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

// longRun is a Go benchmark too long for every `make bench`: it runs
// when its variable is set (`make bench` passes the environment on), and
// its section says how to run it either way.
type longRun struct {
	title, what, bench string
	env, command       string
}

var longRuns = []longRun{{
	title: "Cluster scale",
	what: "1,000 trivial tasks (each agent sleeps 2 s, writes a file and commits) through `ralph autopilot --cluster` with " +
		"ten `ralph worker`s of four slots each, against an embedded cluster of three JetStream servers, all on this machine; " +
		"every task checked merged exactly once and closed. The ideal is tasks × 2 s / 40 slots (50 s for 1,000).",
	bench: "BenchmarkClusterScale", env: "RALPH_BENCH_CLUSTER_TASKS",
	command: "RALPH_BENCH_CLUSTER_TASKS=1000 go test -run '^$' -bench ClusterScale -benchtime 1x -timeout 60m ./cmd/ralph/",
}}

func init() {
	metricTargets = append(metricTargets,
		metricTarget{bench: "BenchmarkClusterScale", unit: "efficiency-%", name: "cluster of 10 workers × 4 slots: efficiency against the ideal",
			target: "≥ 90%", value: func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, met: func(v float64) bool { return v >= 90 }},
		metricTarget{bench: "BenchmarkClusterScale", unit: "tasks/s", name: "cluster of 10 workers × 4 slots: tasks per second",
			target: "reported (the ideal: 20 tasks/s)", value: func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		metricTarget{bench: "BenchmarkClusterScale", unit: "coordinator-cpu-ms/task", name: "cluster of 10 workers × 4 slots: the coordinator's CPU per task",
			target: "reported (the autopilot process and the git it ran)", value: func(v float64) string { return fmt.Sprintf("%.0f ms", v) }},
	)
}

// writeLongRuns writes each long run's section: its command, and its
// figures when this report's Go benchmarks include it.
func (r *report) writeLongRuns(b *strings.Builder) {
	for _, l := range longRuns {
		fmt.Fprintf(b, "\n## %s\n\n%s Not part of every `make bench`: it runs when %s is set.\n\n```sh\n%s\n```\n\n", l.title, l.what, l.env, l.command)
		var figs []figure
		for _, f := range r.metricFigures() {
			for _, t := range metricTargets {
				if t.bench == l.bench && t.name == f.name {
					figs = append(figs, f)
				}
			}
		}
		if len(figs) == 0 {
			b.WriteString("Not run this time.\n")
			continue
		}
		b.WriteString("| figure | value | target |\n| --- | --- | --- |\n")
		for _, f := range figs {
			fmt.Fprintf(b, "| %s | %s | %s |\n", f.name, f.value, f.target)
		}
	}
}

func init() {
	whyMissed["cluster of 10 workers × 4 slots: efficiency against the ideal"] = "Timed from the autopilot's own log " +
		"(`.ralph/autopilot-events.jsonl`: task.assigned, merge.started, task.completed) and the git processes it runs. " +
		"The workers and the coordinator's handling of results keep up (results are handled at once, a task's in order); " +
		"what holds the run is the autopilot's loop, which does one thing at a time: starting a task (the tracker's claim " +
		"and its commit, the worktree, the start's commit) and, above all, the merge queue: each merge checks out a scratch " +
		"worktree of the whole tree, merges, closes the task in the tracker with a commit and removes the worktree, so its " +
		"cost grows with the repository (1.2 s a task early in the 1,000-task run, 6.1 s by the 400th, on 2 CPUs under a load " +
		"of 20 to 38). The ideal needs 20 merges a second. Merging without a scratch checkout (`git merge-tree " +
		"--write-tree`, then `update-ref`) and batching the tracker's commits are the autopilot's targets 1 and 3."
}

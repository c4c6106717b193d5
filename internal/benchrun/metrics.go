package main

import "fmt"

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

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// report collects the figures and writes BENCHMARKS.md.
type report struct {
	machine  machine
	command  string
	sections []section
	goBench  []goBenchmark
}

// section is one measurement: what it is, how it was made, its figures.
type section struct {
	title    string
	what     string   // what is measured and how, in prose
	commands []string // the exact commands, as a user would type them
	figures  []figure
}

// figure is one number beside its target.
type figure struct {
	name   string
	value  string
	target string
	met    bool
	info   bool // shown for comparison; its target column says what, and nothing is met or missed
}

func (r *report) add(s section) { r.sections = append(r.sections, s) }

func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("What ralph itself costs: per iteration, per listed event, per byte parsed,\n")
	b.WriteString("per resume, per long run. The agent's time and money dominate a real run;\n")
	b.WriteString("these figures say how close to nothing ralph adds. `" + r.command + "` writes this file:\n")
	b.WriteString("the Go benchmarks (`go test -run '^$' -bench . -benchmem ./...`), then\n")
	b.WriteString("`go run ./internal/benchrun`, which times whole processes side by side. Each\n")
	b.WriteString("timing is the fastest of " + strconv.Itoa(runs) + " runs.\n\n")
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), %s, %s.\n\n", time.Now().UTC().Format("2006-01-02"),
		r.machine.cpus, r.machine.model, r.machine.goVer, r.machine.git)
	b.WriteString("| figure | value | target | met |\n| --- | --- | --- | --- |\n")
	for _, f := range r.allFigures() {
		met := yesNo(f.met)
		if f.info {
			met = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.name, f.value, f.target, met)
	}
	r.writeMissed(&b)
	for _, s := range r.sections {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", s.title, s.what)
		if len(s.commands) > 0 {
			b.WriteString("```sh\n" + strings.Join(s.commands, "\n") + "\n```\n\n")
		}
		b.WriteString("| figure | value | target |\n| --- | --- | --- |\n")
		for _, f := range s.figures {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", f.name, f.value, f.target)
		}
	}
	r.writeLongRuns(&b)
	if len(r.goBench) > 0 {
		b.WriteString("\n## Go benchmarks\n\n")
		b.WriteString("In-process costs, from `go test -run '^$' -bench . -benchmem ./...` in the same run.\n\n")
		b.WriteString("| benchmark | time/op | throughput | allocs/op | its own figures |\n| --- | --- | --- | --- | --- |\n")
		for _, g := range r.goBench {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", g.name, g.perOp, g.throughput, g.allocs, strings.Join(g.metrics, ", "))
		}
	}
	return b.String()
}

// whyMissed says, for a figure that can miss its target on some machines,
// where the time goes, from a profile; a missed figure without an entry
// says that none was recorded.
var whyMissed = map[string]string{
	"ralph events (table), every line": "Profiled with `go test ./view -run '^$' -bench 'EventsListAll|DecodeTable' -cpuprofile` " +
		"(view/tablerow_bench_test.go has per-line benchmarks). Both outputs share the decoding of each line (about 0.3 µs); " +
		"`--json` then writes the line's bytes as they are, while the table builds a row: the time of day, padded cells, " +
		"and for bookkeeping lines their text (cost as a decimal, token counts, durations), about 0.19 µs a line, after " +
		"taking the row's fields from the payload while the line is decoded and caching the cells that repeat. 1.25× allows " +
		"about 0.1 µs. Making the shared decoding faster makes the ratio worse, not better. In absolute terms the table " +
		"of a 1,000,000-line log costs about a quarter of a microsecond a line more than --json; filtered, as one reads a " +
		"log, it is within the target.",
	"autopilot --parallel 4 against one shell loop, trivial tasks": "Profiled with perf (samples by process, 40 tasks), strace " +
		"(processes and files created per task) and a git on PATH that names each process. On 2 cores the autopilot's wall per " +
		"task cannot be under its CPU per task halved, and the CPU, not the merge queue, is what bounds it. Worktrees are " +
		"reused (a spare detached in place, one checkout a task), state and progress.md are written unsynced once a pass of " +
		"the coordinator, finished tasks merge on the merge under way and land together (one fast-forward, one commit of " +
		"their closes), branches and a slot's git paths are read without git: about 23 processes a task (32 before), 18 of " +
		"them git (27 before; two are the agent's). On this machine idle, the same day, `make bench` measured 128 ms of " +
		"ralph's CPU a task and 1.60× before these changes, 87-88 ms and 1.20-1.26× after (three runs). Of 85-130 ms of CPU a task: git about 55 ms (each process 2-6 ms: the " +
		"loop's looks at its worktree, status twice, a tree written twice, ls-files and log, about 18 ms; the merge, its " +
		"checks, its landing and the branch's removal, about 25 ms; the next task's checkout and the spare's clean, about " +
		"9 ms), each task's `ralph loop` process 35-45 ms (its start-up, config and journal), the coordinator 13-16 ms. A " +
		"quarter of all of it is the kernel making files on ext4 (about 95 a task, most of them git's lock files and " +
		"objects). What is left: the loop run in-process, its looks at git folded into one, the merge's checks (the " +
		"tracker's files, conflict markers, an earlier merge of the task) in fewer processes.",
}

// writeMissed lists the figures that missed their targets, each with why.
func (r *report) writeMissed(b *strings.Builder) {
	var missed []figure
	for _, f := range r.allFigures() {
		if !f.met && !f.info {
			missed = append(missed, f)
		}
	}
	if len(missed) == 0 {
		return
	}
	b.WriteString("\n## Targets missed\n\n")
	for _, f := range missed {
		why, ok := whyMissed[f.name]
		if !ok {
			why = "No profile recorded for this one yet."
		}
		fmt.Fprintf(b, "- **%s** (%s; target %s). %s\n", f.name, f.value, f.target, why)
	}
}

// allFigures is every figure with a target, the Go benchmarks' included.
func (r *report) allFigures() []figure {
	var out []figure
	for _, s := range r.sections {
		for _, f := range s.figures {
			if f.target != "" {
				out = append(out, f)
			}
		}
	}
	out = append(out, r.throughputFigures()...)
	return append(out, r.metricFigures()...)
}

// throughputTargets are the Go benchmarks with a target in MB/s.
var throughputTargets = []struct {
	pattern *regexp.Regexp
	what    string
	mbps    float64
}{
	{regexp.MustCompile(`^BenchmarkScan$`), "event log scan", 300},
	{regexp.MustCompile(`^BenchmarkReaderRead$`), "event log reader", 300},
	{regexp.MustCompile(`^BenchmarkParse(\w+)$`), "stream parser", 200},
}

func (r *report) throughputFigures() []figure {
	var out []figure
	for _, g := range r.goBench {
		for _, t := range throughputTargets {
			if !t.pattern.MatchString(g.name) || g.mbps == 0 {
				continue
			}
			out = append(out, figure{name: fmt.Sprintf("%s (%s)", t.what, g.name), value: g.throughput,
				target: fmt.Sprintf("≥ %.0f MB/s", t.mbps), met: g.mbps >= t.mbps})
		}
	}
	return out
}

// goBenchmark is one line of `go test -bench` output.
type goBenchmark struct {
	name       string
	perOp      string
	throughput string
	mbps       float64
	allocs     string
	// metrics are those the benchmark reports itself (b.ReportMetric);
	// values has each by its unit.
	metrics []string
	values  map[string]float64
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func parseGoBench(out string) []goBenchmark {
	var list []goBenchmark
	for line := range strings.Lines(out) {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		g := goBenchmark{name: m[1]}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			value, unit := fields[i], fields[i+1]
			switch unit {
			case "ns/op":
				g.perOp = perOp(value)
			case "MB/s":
				g.throughput = value + " MB/s"
				g.mbps, _ = strconv.ParseFloat(value, 64)
			case "allocs/op":
				g.allocs = value
			case "B/op":
			default:
				g.metrics = append(g.metrics, value+" "+unit)
				if v, err := strconv.ParseFloat(value, 64); err == nil {
					if g.values == nil {
						g.values = map[string]float64{}
					}
					g.values[unit] = v
				}
			}
		}
		list = append(list, g)
	}
	return list
}

// perOp turns ns/op into the unit that reads best.
func perOp(ns string) string {
	v, err := strconv.ParseFloat(ns, 64)
	if err != nil {
		return ns + " ns"
	}
	return time.Duration(v).String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

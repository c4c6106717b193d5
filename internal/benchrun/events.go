package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/internal/benchgen"
)

// eventsList times `ralph events` against jq and grep on one generated log.
func (b *bench) eventsList(r *report) error {
	lines := b.n(1_000_000, 10_000)
	progress("events: writing a %d-line log", lines)
	log := filepath.Join(b.work, "events.jsonl")
	size, err := benchgen.WriteFile(log, lines)
	if err != nil {
		return err
	}
	short := filepath.Join(b.work, "events-short.jsonl")
	if _, err := benchgen.WriteFile(short, 1000); err != nil {
		return err
	}
	events := func(args ...string) proc {
		return proc{dir: b.work, args: append([]string{b.ralph, "events"}, args...)}
	}
	progress("events: timing ralph events, jq and grep")
	asJSON, err := events("--file", log, "--topic", "build.done", "--json").time()
	if err != nil {
		return err
	}
	table, err := events("--file", log, "--topic", "build.done").time()
	if err != nil {
		return err
	}
	allJSON, err := events("--file", log, "--json").time()
	if err != nil {
		return err
	}
	allTable, err := events("--file", log).time()
	if err != nil {
		return err
	}
	glob, err := events("--file", log, "--topic", "*.done", "--hat", "builder", "--json").time()
	if err != nil {
		return err
	}
	last, err := events("--file", log, "--last", "5").time()
	if err != nil {
		return err
	}
	lastShort, err := events("--file", short, "--last", "5").time()
	if err != nil {
		return err
	}
	grep, err := proc{dir: b.work, args: []string{"grep", "-cF", `"topic":"build.done"`, log}}.time()
	if err != nil {
		return err
	}
	s := section{title: "ralph events",
		what: fmt.Sprintf("A generated log of %d lines (%s) shaped like a long two-hat run (internal/benchgen), listed by topic "+
			"as JSON and as the table, with a glob and a hat, and its last 5 lines; jq and grep on the same file.", lines, mib(size)),
		commands: []string{
			"ralph events --file LOG --topic build.done --json",
			"ralph events --file LOG --topic build.done",
			"ralph events --file LOG --topic '*.done' --hat builder --json",
			"ralph events --file LOG --json",
			"ralph events --file LOG",
			"ralph events --file LOG --last 5",
			`jq -c 'select(.topic=="build.done")' LOG`,
			`grep -cF '"topic":"build.done"' LOG   # -c: GNU grep stops at the first match when its output is /dev/null`,
		}}
	rss := max(asJSON.maxRSS, table.maxRSS, allJSON.maxRSS, allTable.maxRSS, glob.maxRSS, last.maxRSS)
	s.figures = append(s.figures,
		figure{name: "ralph events --topic --json", value: fmt.Sprintf("%s (%.0f MB/s)", ms(asJSON.wall), mbps(size, asJSON.wall))},
		figure{name: "ralph events --topic (table)", value: fmt.Sprintf("%s (%.2f× --json)", ms(table.wall), ratio(table.wall, asJSON.wall)),
			target: "as fast as --json (≤ 1.25×)", met: table.wall <= asJSON.wall*5/4},
		figure{name: "ralph events --topic '*.done' --hat --json", value: ms(glob.wall)},
		figure{name: "ralph events --json, every line", value: fmt.Sprintf("%s (%.0f MB/s)", ms(allJSON.wall), mbps(size, allJSON.wall))},
		figure{name: "ralph events (table), every line", value: fmt.Sprintf("%s (%.2f× --json)", ms(allTable.wall), ratio(allTable.wall, allJSON.wall)),
			target: "as fast as --json (≤ 1.25×)", met: allTable.wall <= allJSON.wall*5/4},
		figure{name: "grep -cF", value: fmt.Sprintf("%s (ralph --json: %.2f× grep's time)", ms(grep.wall), ratio(asJSON.wall, grep.wall))},
		figure{name: "ralph events peak memory", value: mib(rss), target: "< 64 MiB", met: rss < 64<<20},
		figure{name: fmt.Sprintf("ralph events --last 5, %d lines vs 1,000", lines),
			value: fmt.Sprintf("%s vs %s", ms(last.wall), ms(lastShort.wall)), target: "constant in log size (≤ 10 ms apart)",
			met: last.wall-lastShort.wall <= 10*time.Millisecond})
	if _, err := exec.LookPath("jq"); err == nil {
		jq, err := proc{dir: b.work, args: []string{"jq", "-c", `select(.topic=="build.done")`, log}}.time()
		if err != nil {
			return err
		}
		x := ratio(jq.wall, asJSON.wall)
		s.figures = append(s.figures, figure{name: "ralph events --topic --json vs jq", value: fmt.Sprintf("%.1f× as fast (jq: %s)", x, ms(jq.wall)),
			target: "≥ 10×", met: x >= 10})
	} else {
		s.figures = append(s.figures, figure{name: "ralph events --topic --json vs jq", value: "jq is not installed (apt-get install jq)",
			target: "≥ 10×"})
	}
	r.add(s)
	return nil
}

func mbps(size int64, d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// Command benchrun measures ralph from the outside, as a user would: whole
// processes, each timed side by side with what it is compared to (the same
// agent run by a plain shell loop, jq and grep on the same log, the same
// resume on a short and a long log), and writes BENCHMARKS.md with every
// figure beside its target. `make bench` runs it after the Go benchmarks
// and passes their output, which the report includes.
//
// Every timing is the fastest of a few runs: on a shared machine the
// fastest run is the one least disturbed by others, and a ratio of two
// fastest runs compares like with like.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	ralph := flag.String("ralph", "bin/ralph", "the ralph binary to measure")
	goBench := flag.String("gobench", "", "a file holding `go test -bench` output, to include")
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	scale := flag.Float64("scale", 1, "a factor on every size (iterations, log lines), for a quick try")
	many := flag.Bool("many", false, "add the autopilot's scale figure: 500 tasks through 32 slots (minutes)")
	only := flag.String("only", "", "run only the named section (overhead, startup, sandbox, events, resume, memory, backlogs, autopilot) and print it")
	flag.Parse()
	if err := run(*ralph, *goBench, *out, *scale, *many, *only); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func run(ralph, goBench, out string, scale float64, many bool, only string) error {
	if !rssMeasured {
		return fmt.Errorf("the report includes peak memory, which %s does not report for a finished process (no getrusage): run make bench on Linux or macOS", runtime.GOOS)
	}
	bin, err := filepath.Abs(ralph)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no ralph binary at %s: build it first (make build): %w", bin, err)
	}
	work, err := os.MkdirTemp("", "ralph-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	b := &bench{ralph: bin, work: work, scale: scale, manySlots: many}
	r := &report{machine: describeMachine(), command: "make bench"}
	sections := []struct {
		name string
		run  func(*report) error
	}{{"overhead", b.overhead}, {"startup", b.startup}, {"sandbox", b.sandboxCost}, {"events", b.eventsList}, {"resume", b.resume},
		{"memory", b.memory}, {"backlogs", b.backlogs}, {"autopilot", b.autopilot}}
	for _, s := range sections {
		if only != "" && s.name != only {
			continue
		}
		if err := s.run(r); err != nil {
			return err
		}
	}
	if only != "" {
		// A look at one section: printed, and BENCHMARKS.md left as it is.
		fmt.Print(r.markdown())
		return nil
	}
	if goBench != "" {
		data, err := os.ReadFile(goBench)
		if err != nil {
			return err
		}
		r.goBench = parseGoBench(string(data))
	}
	return os.WriteFile(out, []byte(r.markdown()), 0o644)
}

// bench holds what every measurement needs.
type bench struct {
	ralph string
	work  string
	scale float64
	// manySlots adds the autopilot's figure at scale (-many).
	manySlots bool
}

// n scales a size, keeping at least min.
func (b *bench) n(full, minimum int) int {
	return max(int(float64(full)*b.scale), minimum)
}

func (b *bench) dir(name string) (string, error) {
	dir := filepath.Join(b.work, name)
	return dir, os.MkdirAll(dir, 0o755)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchrun: "+format+"\n", args...)
}

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
	flag.Parse()
	if err := run(*ralph, *goBench, *out, *scale); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

func run(ralph, goBench, out string, scale float64) error {
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
	b := &bench{ralph: bin, work: work, scale: scale}
	r := &report{machine: describeMachine(), command: "make bench"}
	for _, section := range []func(*report) error{b.overhead, b.sandboxCost, b.eventsList, b.resume, b.memory, b.backlogs} {
		if err := section(r); err != nil {
			return err
		}
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

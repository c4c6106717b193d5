package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// resume times `ralph loop --resume` from its start to the agent's, on a
// run whose log holds about a thousand lines and on one of about a million.
func (b *bench) resume(r *report) error {
	long := b.n(1_000_000, 20_000)
	short, err := b.resumeTime("resume-short", 1000, 10)
	if err != nil {
		return err
	}
	longest, err := b.resumeTime("resume-long", long, 1000)
	if err != nil {
		return err
	}
	diff := longest.toAgent - short.toAgent
	r.add(section{title: "Resume",
		what: "Two runs built by real iterations of an agent that publishes many events each (as `<event>` tags), so the log " +
			"holds what a long run's does (events, routing decisions, iteration lines), stopped at max_iterations; then " +
			"`ralph loop --resume` with a limit one higher, timed from its start to the agent's (the agent writes the time it " +
			"starts).",
		commands: []string{"ralph loop --quiet                                  # builds the run: max_iterations: N",
			"ralph loop --resume --max-iterations N+1 --quiet   # timed to the agent's start"},
		figures: []figure{
			{name: fmt.Sprintf("resume to agent start, %d-line log", short.lines), value: ms(short.toAgent)},
			{name: fmt.Sprintf("resume to agent start, %d-line log", longest.lines), value: ms(longest.toAgent)},
			{name: "resume, long log minus short log", value: ms(diff), target: "≤ 20 ms", met: diff <= 20*time.Millisecond},
		}})
	return nil
}

type resumeTiming struct {
	lines   int
	toAgent time.Duration
}

// resumeTime builds a run of about lines log lines from iterations that
// publish perIteration events each, then times its resumes.
func (b *bench) resumeTime(name string, lines, perIteration int) (resumeTiming, error) {
	iterations := max(lines/(2*perIteration+4), 1)
	w, err := b.workspace(name, iterations, 10, true)
	if err != nil {
		return resumeTiming{}, err
	}
	say := filepath.Join(w.dir, "say.txt")
	var tags strings.Builder
	for i := range perIteration {
		fmt.Fprintf(&tags, "<event topic=\"work.item\">item %d</event>\n", i)
	}
	if err := os.WriteFile(say, []byte(tags.String()), 0o644); err != nil {
		return resumeTiming{}, err
	}
	progress("resume: building a run of %d iterations × %d events", iterations, perIteration)
	if _, err := w.loop(b.ralph, "BENCH_SAY="+say).once(); err != nil {
		return resumeTiming{}, err
	}
	n, err := logLines(w.dir)
	if err != nil {
		return resumeTiming{}, err
	}
	stamp := filepath.Join(w.dir, "agent-started")
	best := time.Duration(-1)
	for i := range runs {
		limit := strconv.Itoa(iterations + 1 + i)
		p := proc{dir: w.dir, env: []string{"BENCH_STAMP=" + stamp},
			args: []string{b.ralph, "loop", "--resume", "--max-iterations", limit, "--quiet"}, codes: []int{2}}
		start := time.Now()
		if _, err := p.once(); err != nil {
			return resumeTiming{}, err
		}
		agent, err := readStamp(stamp)
		if err != nil {
			return resumeTiming{}, err
		}
		if d := agent.Sub(start); best < 0 || d < best {
			best = d
		}
	}
	return resumeTiming{lines: n, toAgent: best}, nil
}

func readStamp(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("the agent did not start: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("agent start %q: %w", data, err)
	}
	return time.Unix(0, ns), nil
}

// logLines counts the lines of the workspace's current event log.
func logLines(dir string) (int, error) {
	current, err := os.ReadFile(runfiles.In(dir).CurrentEvents())
	if err != nil {
		return 0, err
	}
	f, err := os.Open(filepath.Join(dir, strings.TrimSpace(string(current))))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			n++
		}
	}
	return n, sc.Err()
}

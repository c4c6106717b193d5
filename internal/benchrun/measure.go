package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// runs is how many times each timed command runs; the fastest counts.
const runs = 3

// timing is one command's fastest run, its least CPU and its largest
// resident set.
type timing struct {
	wall time.Duration
	// cpu is the user and system time of the command and of the
	// processes it waited for (its agents, git, a re-executed ralph).
	cpu    time.Duration
	maxRSS int64 // bytes
}

// proc is a command to time.
type proc struct {
	dir   string
	env   []string
	args  []string
	codes []int        // the exit codes that mean it worked; none: 0
	reset func() error // run before each run, to start from the same state; may be nil
}

// time runs p runs times and returns its fastest run.
func (p proc) time() (timing, error) { return p.timeN(runs) }

// timeN runs p n times and returns its fastest run.
func (p proc) timeN(n int) (timing, error) {
	var best timing
	for i := range n {
		if p.reset != nil {
			if err := p.reset(); err != nil {
				return timing{}, err
			}
		}
		t, err := p.once()
		if err != nil {
			return timing{}, err
		}
		if i == 0 || t.wall < best.wall {
			best.wall = t.wall
		}
		if i == 0 || t.cpu < best.cpu {
			best.cpu = t.cpu
		}
		best.maxRSS = max(best.maxRSS, t.maxRSS)
	}
	return best, nil
}

// once runs p and measures it; stdout is thrown away, as a user piping it
// into another program would not wait on a terminal.
func (p proc) once() (timing, error) {
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if code := exitCode(err); !p.accepts(code) {
		return timing{}, fmt.Errorf("%s: exit %d: %w\n%s", strings.Join(p.args, " "), code, err, tail(stderr.String()))
	}
	t := timing{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	t.maxRSS = maxRSS(cmd.ProcessState)
	return t, nil
}

func (p proc) accepts(code int) bool {
	if len(p.codes) == 0 {
		return code == 0
	}
	for _, c := range p.codes {
		if c == code {
			return true
		}
	}
	return false
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// machine is what the report says of where it was measured.
type machine struct {
	cpus  int
	model string
	goVer string
	git   string
}

func describeMachine() machine {
	m := machine{cpus: runtime.NumCPU(), goVer: runtime.Version(), model: "unknown"}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		m.git = strings.TrimSpace(string(out))
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/benchgen"
)

// backlogLimit is how long one dry run may take before it is stopped and
// reported as not finished: a regression to a look at the tracker per
// task takes minutes at these sizes, and must not hang make bench.
const backlogLimit = 60 * time.Second

// backlogTarget is a dry run's target for a backlog of n tasks.
func backlogTarget(n int) time.Duration {
	if n > 2000 {
		return 5 * time.Second
	}
	return 2 * time.Second
}

// backlogs times `ralph autopilot --dry-run --json` on a backlog of 2,000
// tasks in each tracker's own files and on a checklist of 10,000 items,
// and what a task costs in memory: the peak resident set of the 10,000
// items' plan less that of the 2,000's, a task at a time.
func (b *bench) backlogs(r *report) error {
	fakes, err := b.buildFakes()
	if err != nil {
		return err
	}
	n, many := b.n(2000, 200), b.n(10_000, 1000)
	type size struct {
		kind string
		n    int
	}
	var sizes []size
	for _, kind := range benchgen.Sources {
		sizes = append(sizes, size{kind, n})
	}
	sizes = append(sizes, size{"checklist", many})
	var figures []figure
	rss := map[int]int64{}
	var textPerTask float64
	for _, s := range sizes {
		progress("backlogs: --dry-run of %d %s tasks", s.n, s.kind)
		dir, err := b.backlogRepo(s.kind, s.n)
		if err != nil {
			return err
		}
		p := proc{dir: dir, env: []string{"PATH=" + fakes + string(os.PathListSeparator) + os.Getenv("PATH")},
			args: []string{b.ralph, "autopilot", "--dry-run", "--json"}}
		t, finished, err := timeWithin(p, backlogLimit)
		if err != nil {
			return err
		}
		target := backlogTarget(s.n)
		f := figure{name: fmt.Sprintf("autopilot --dry-run, %s %s tasks", thousands(s.n), s.kind),
			target: fmt.Sprintf("< %d s", int(target.Seconds())), met: finished && t.wall < target}
		f.value = ms(t.wall) + ", " + mib(t.maxRSS) + " peak"
		if !finished {
			f.value = fmt.Sprintf("not done in %d s", int(backlogLimit.Seconds()))
		}
		figures = append(figures, f)
		if s.kind == "checklist" && finished {
			rss[s.n] = t.maxRSS
			if s.n == many {
				textPerTask, err = bytesPerTask(filepath.Join(dir, "TODO.md"), s.n)
				if err != nil {
					return err
				}
			}
		}
	}
	// What a task adds is its Task, its place in the plan and its JSON,
	// with the collector's headroom: a constant a task, which a look at
	// the whole backlog per task (or a quadratic resolution of its
	// dependencies) would make grow with the backlog.
	perTask := float64(rss[many]-rss[n]) / float64(many-n)
	mem := figure{name: "memory a task, checklist (peak RSS, a task)", target: "≤ 4 KiB"}
	if rss[many] == 0 || rss[n] == 0 {
		mem.value = "not measured: a run was stopped"
	} else {
		mem.value, mem.met = fmt.Sprintf("%.1f KiB (its text: %.2f KiB)", perTask/1024, textPerTask/1024), perTask <= 4096
	}
	figures = append(figures, mem)
	r.add(section{title: "Backlogs",
		what: fmt.Sprintf("The dry run's plan of a backlog written in each tracker's own files (internal/benchgen: every tenth task waits "+
			"for the one before it, but in a checklist), in a git repository with the tracker's files committed: tk's tickets and the "+
			"fake bd's database are read through ralph's fakes of tk and bd (internal/fakes), a command source lists with `cat`. "+
			"A run not done in %d s is stopped. The memory a task is what the plan of %s checklist items needs beyond that of %s, a task.", int(backlogLimit.Seconds()), thousands(many), thousands(n)),
		commands: []string{"ralph autopilot --dry-run --json   # autopilot.source: tk, beads, prd, checklist, command"},
		figures:  figures})
	return nil
}

// buildFakes builds ralph's fakes of tk and bd into the work directory.
func (b *bench) buildFakes() (string, error) {
	dir, err := b.dir("fakes")
	if err != nil {
		return "", err
	}
	mod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(mod)))
	for _, tool := range []string{"tk", "bd"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, tool), "./internal/fakes/"+tool)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building the fake %s: %w\n%s", tool, err, out)
		}
	}
	return dir, nil
}

// backlogRepo is a repository holding a backlog of n tasks of kind, and
// a ralph.yml whose autopilot reads it, all committed.
func (b *bench) backlogRepo(kind string, n int) (string, error) {
	dir, err := b.dir(fmt.Sprintf("backlog-%s-%d", kind, n))
	if err != nil {
		return "", err
	}
	bl, err := benchgen.WriteBacklog(dir, kind, n)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(tinyAgent), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(loopConfig(4)+"autopilot:\n  parallel: 4\n"+bl.Source), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main", "."}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return dir, nil
}

// timeWithin is p.time, each run stopped after limit; false when one was.
func timeWithin(p proc, limit time.Duration) (timing, bool, error) {
	var best timing
	for i := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		cmd := exec.CommandContext(ctx, p.args[0], p.args[1:]...)
		cmd.Dir, cmd.Env = p.dir, append(os.Environ(), p.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		if timedOut {
			return timing{wall: wall}, false, nil
		}
		if err != nil {
			return timing{}, false, fmt.Errorf("%s in %s: %w\n%s", strings.Join(p.args, " "), p.dir, err, tail(stderr.String()))
		}
		if i == 0 || wall < best.wall {
			best.wall = wall
		}
		best.maxRSS = max(best.maxRSS, maxRSS(cmd.ProcessState))
	}
	return best, true, nil
}

// bytesPerTask is the size of a tracker's file over its n tasks.
func bytesPerTask(path string, n int) (float64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return float64(fi.Size()) / float64(n), nil
}

// thousands writes n with a comma between its thousands (10,000).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

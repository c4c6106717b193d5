package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// tinyAgent is the agent every loop measurement runs: it reads its prompt
// and publishes one event, so that what is timed is ralph. With
// BENCH_STAMP set it first writes when it started (ns since the epoch);
// with BENCH_EDIT set it appends a line to edited.txt, a change to the
// workspace for ralph to see;
// with BENCH_SAY set it prints that file instead of its one event.
const tinyAgent = `#!/bin/sh
[ -n "$BENCH_STAMP" ] && date +%s%N > "$BENCH_STAMP"
[ -n "$BENCH_EDIT" ] && echo edit >> edited.txt
cat >/dev/null
if [ -n "$BENCH_SAY" ]; then cat "$BENCH_SAY"; else echo '<event topic="work.tick">tick</event>'; fi
`

// loopConfig runs the tiny agent for n iterations, with no stuck check
// (the agent changes nothing, on purpose) and no cooldown.
func loopConfig(n int) string {
	return fmt.Sprintf(`cli:
  backend: command
  command: ./agent.sh
  prompt_mode: stdin
event_loop:
  prompt: Tick.
  max_iterations: %d
  stuck_threshold: 0
  max_consecutive_failures: 1000
`, n)
}

// workspace is a directory set up for a loop of the tiny agent.
type workspace struct {
	dir string
}

func (b *bench) workspace(name string, iterations int, files int, git bool) (workspace, error) {
	dir, err := b.dir(name)
	if err != nil {
		return workspace{}, err
	}
	for i := range files {
		path := filepath.Join(dir, "src", strconv.Itoa(i%200), fmt.Sprintf("file%d.go", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return workspace{}, err
		}
		if err := os.WriteFile(path, fmt.Appendf(nil, "package p%d\n\nconst N = %d\n", i%200, i), 0o644); err != nil {
			return workspace{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(tinyAgent), 0o755); err != nil {
		return workspace{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "ralph.yml"), []byte(loopConfig(iterations)), 0o644); err != nil {
		return workspace{}, err
	}
	if git {
		for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"},
			{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "start"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				return workspace{}, fmt.Errorf("git %v: %w\n%s", args, err, out)
			}
		}
	}
	return workspace{dir: dir}, nil
}

// fresh moves the last run out of the way, so each timed run starts a new
// one. It is moved, not deleted: some file systems (ext4 without a journal)
// search past recently deleted inodes for every file created in the next
// seconds, which would charge ralph for the benchmark's own clean-up. The
// whole work directory goes when the benchmarks end.
func (w workspace) fresh() error {
	old := runfiles.In(w.dir).Path()
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	trash, err := os.MkdirTemp(filepath.Dir(w.dir), "old-run-")
	if err != nil {
		return err
	}
	return os.Rename(old, runfiles.In(trash).Path())
}

func (w workspace) loop(ralph string, env ...string) proc {
	return proc{dir: w.dir, env: env, args: []string{ralph, "loop", "--quiet"}, codes: []int{2}, reset: w.fresh}
}

// shellLoop runs the agent n times from sh, as a user's own loop would.
func (w workspace) shellLoop(n int, env ...string) proc {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo Tick. | ./agent.sh >/dev/null; i=$((i+1)); done`, n)
	return proc{dir: w.dir, env: env, args: []string{"sh", "-c", script}}
}

// overhead times n iterations under ralph against the same n agent runs
// from a shell loop, in three workspaces.
func (b *bench) overhead(r *report) error {
	n := b.n(300, 20)
	big := b.n(100, 10)
	s := section{title: "Iteration overhead",
		what: fmt.Sprintf("%d iterations of a tiny agent (a shell script that reads its prompt and prints one `<event>` tag) under `ralph loop`, "+
			"minus the same %d agent runs from a plain shell loop, divided by %d: what ralph adds to each iteration, checkpoint and "+
			"log writes and its look at the workspace included. In a repository of 20,000 files (%d iterations) the target "+
			"allows one `git status` on top.", n, n, n, big),
		commands: []string{"ralph loop --quiet   # max_iterations: N, cli.backend: command, cli.command: ./agent.sh",
			`i=0; while [ $i -lt N ]; do echo Tick. | ./agent.sh >/dev/null; i=$((i+1)); done`}}
	cases := []struct {
		name  string
		files int
		git   bool
		edit  bool
		n     int
	}{
		{"small git repository", 10, true, false, n},
		{"no repository", 10, false, false, n},
		{"git repository of 20,000 files", 20000, true, false, big},
		{"small git repository, the agent edits a file every iteration", 10, true, true, n},
	}
	for _, c := range cases {
		progress("overhead: %s", c.name)
		w, err := b.workspace(fmt.Sprintf("overhead-%d-%t-%t", c.files, c.git, c.edit), c.n, c.files, c.git)
		if err != nil {
			return err
		}
		var env []string
		if c.edit {
			env = append(env, "BENCH_EDIT=1")
		}
		looped, err := w.loop(b.ralph, env...).time()
		if err != nil {
			return err
		}
		shell, err := w.shellLoop(c.n, env...).time()
		if err != nil {
			return err
		}
		per := (looped.wall - shell.wall) / time.Duration(c.n)
		limit := 2 * time.Millisecond
		target := "≤ 2 ms"
		switch {
		case c.edit:
			// Not a target of its own: a changed workspace needs one look.
			limit, target = per, "for comparison: one `git status` per iteration"
		case c.files >= 20000:
			status, err := proc{dir: w.dir, args: append([]string{"git"}, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")}.time()
			if err != nil {
				return err
			}
			limit += status.wall
			target = fmt.Sprintf("≤ 2 ms + one git status (%s) = %s", ms(status.wall), ms(limit))
		}
		s.figures = append(s.figures,
			figure{name: "overhead per iteration, " + c.name, value: ms(per), target: target, met: per <= limit, info: c.edit},
			figure{name: "ralph loop, " + c.name, value: fmt.Sprintf("%s for %d iterations (%s each)", ms(looped.wall), c.n, ms(looped.wall/time.Duration(c.n)))},
			figure{name: "shell loop, " + c.name, value: fmt.Sprintf("%s for %d runs (%s each)", ms(shell.wall), c.n, ms(shell.wall/time.Duration(c.n)))})
	}
	if err := b.syscalls(&s, n); err != nil {
		return err
	}
	r.add(s)
	return nil
}

// syscalls counts, with strace where it is installed, what an iteration
// asks of the system: fsyncs and git processes, with an agent that changes
// nothing and with one that edits a file.
func (b *bench) syscalls(s *section, n int) error {
	if _, err := exec.LookPath("strace"); err != nil {
		progress("overhead: strace is not installed; no system call counts")
		return nil
	}
	for _, edit := range []bool{false, true} {
		w, err := b.workspace(fmt.Sprintf("strace-%t", edit), n, 10, true)
		if err != nil {
			return err
		}
		trace := filepath.Join(b.work, fmt.Sprintf("strace-%t.txt", edit))
		p := w.loop(b.ralph)
		p.args = append([]string{"strace", "-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,execve"}, p.args...)
		if edit {
			p.env = append(p.env, "BENCH_EDIT=1")
		}
		if _, err := p.once(); err != nil {
			return err
		}
		data, err := os.ReadFile(trace)
		if err != nil {
			return err
		}
		fsyncs, gits := countCalls(string(data))
		who := "an agent that changes nothing"
		if edit {
			who = "an agent that edits a file"
		}
		s.figures = append(s.figures, figure{name: "system calls per iteration, " + who,
			value:  fmt.Sprintf("%.2f fsync, %.2f git processes", float64(fsyncs)/float64(n), float64(gits)/float64(n)),
			target: "only what the iteration's decisions need", info: true})
	}
	s.commands = append(s.commands, "strace -f -e trace=fsync,fdatasync,execve ralph loop --quiet")
	return nil
}

// countCalls counts the flushes and the git processes in strace output.
func countCalls(trace string) (fsyncs, gits int) {
	for line := range strings.Lines(trace) {
		switch {
		case strings.Contains(line, "fsync(") || strings.Contains(line, "fdatasync("):
			fsyncs++
		case strings.Contains(line, "execve(") && strings.Contains(line, "/git\"") && !strings.Contains(line, "ENOENT"):
			gits++
		}
	}
	return fsyncs, gits
}

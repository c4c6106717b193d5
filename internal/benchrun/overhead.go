package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// tinyAgent is the agent every loop measurement runs: it reads its prompt
// and publishes one event, so that what is timed is ralph. With
// BENCH_STAMP set it first writes when it started (ns since the epoch);
// with BENCH_SAY set it prints that file instead of its one event.
const tinyAgent = `#!/bin/sh
[ -n "$BENCH_STAMP" ] && date +%s%N > "$BENCH_STAMP"
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
	old := filepath.Join(w.dir, ".ralph")
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	trash, err := os.MkdirTemp(filepath.Dir(w.dir), "old-run-")
	if err != nil {
		return err
	}
	return os.Rename(old, filepath.Join(trash, ".ralph"))
}

func (w workspace) loop(ralph string, env ...string) proc {
	return proc{dir: w.dir, env: env, args: []string{ralph, "loop", "--quiet"}, codes: []int{2}, reset: w.fresh}
}

// shellLoop runs the agent n times from sh, as a user's own loop would.
func (w workspace) shellLoop(n int) proc {
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo Tick. | ./agent.sh >/dev/null; i=$((i+1)); done`, n)
	return proc{dir: w.dir, args: []string{"sh", "-c", script}}
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
		n     int
	}{
		{"small git repository", 10, true, n},
		{"no repository", 10, false, n},
		{"git repository of 20,000 files", 20000, true, big},
	}
	for _, c := range cases {
		progress("overhead: %s", c.name)
		w, err := b.workspace("overhead-"+strconv.Itoa(c.files)+strconv.FormatBool(c.git), c.n, c.files, c.git)
		if err != nil {
			return err
		}
		looped, err := w.loop(b.ralph).time()
		if err != nil {
			return err
		}
		shell, err := w.shellLoop(c.n).time()
		if err != nil {
			return err
		}
		per := (looped.wall - shell.wall) / time.Duration(c.n)
		limit := 2 * time.Millisecond
		target := "≤ 2 ms"
		if c.files >= 20000 {
			status, err := proc{dir: w.dir, args: append([]string{"git"}, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")}.time()
			if err != nil {
				return err
			}
			limit += status.wall
			target = fmt.Sprintf("≤ 2 ms + one git status (%s) = %s", ms(status.wall), ms(limit))
		}
		s.figures = append(s.figures,
			figure{name: "overhead per iteration, " + c.name, value: ms(per), target: target, met: per <= limit},
			figure{name: "ralph loop, " + c.name, value: fmt.Sprintf("%s for %d iterations (%s each)", ms(looped.wall), c.n, ms(looped.wall/time.Duration(c.n)))},
			figure{name: "shell loop, " + c.name, value: fmt.Sprintf("%s for %d runs (%s each)", ms(shell.wall), c.n, ms(shell.wall/time.Duration(c.n)))})
	}
	r.add(s)
	return nil
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// taskAgent is the agent of every autopilot measurement: it writes one
// file named after its task (its worktree's name) and commits it, as the
// shortest real task would.
const taskAgent = `#!/bin/sh
cat >/dev/null
task=$(basename "$PWD")
echo "$task" > "$task.txt"
git add "$task.txt" && git commit -q -m "do $task"
echo '<event topic="LOOP_COMPLETE">done</event>'
`

// autopilotConfig runs the task agent under each task's loop, with the
// tasks in a checklist.
const autopilotConfig = `cli:
  backend: command
  command: ./agent.sh
  prompt_mode: stdin
event_loop:
  max_iterations: 4
  completion_confirmations: 1
autopilot:
  source: {type: checklist, path: TODO.md}
`

// shellTasks is the same work as the autopilot's, one task at a time,
// from sh: a worktree per task, the agent in it, a merge, the worktree
// and its branch removed.
const shellTasks = `i=1; while [ $i -le %d ]; do
  t=task-$i
  git worktree add -q -b ralph/$t .worktrees/$t main
  (cd .worktrees/$t && echo "Task $i" | ./agent.sh >/dev/null)
  git merge -q --no-ff --no-edit ralph/$t
  git worktree remove .worktrees/$t
  git branch -q -D ralph/$t
  i=$((i+1))
done
`

// taskRepo makes a repository of n checklist tasks for the task agent,
// sized with writeSizedTree's files when sized is set.
func (b *bench) taskRepo(name string, n int, sized bool) (string, error) {
	dir, err := b.dir(name)
	if err != nil {
		return "", err
	}
	if sized {
		if err := writeSizedTree(dir); err != nil {
			return "", err
		}
	}
	var todo strings.Builder
	for i := range n {
		fmt.Fprintf(&todo, "- [ ] Task %d\n", i+1)
	}
	files := map[string]string{"agent.sh": taskAgent, "ralph.yml": autopilotConfig, "TODO.md": todo.String(),
		".gitignore": "/.ralph/\n/.worktrees/\n"}
	for file, text := range files {
		mode := os.FileMode(0o644)
		if file == "agent.sh" {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), mode); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main", "."}, {"config", "user.name", "bench"},
		{"config", "user.email", "bench@example.com"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return dir, nil
}

// autopilot times n trivial tasks through `ralph autopilot --parallel 4`
// beside a shell loop doing the same work one task at a time, once each.
func (b *bench) autopilot(r *report) error {
	n := b.n(100, 10)
	s := section{title: "Autopilot",
		what: fmt.Sprintf("%d tasks in a checklist whose agent writes one file and commits it, through `ralph autopilot --parallel 4` "+
			"(a worktree per task, its loop, the verified merge queue, the tracker's claim and close commits), beside a plain shell loop "+
			"doing the same work one task at a time (`git worktree add`, the agent, `git merge`, `git worktree remove`). One run of each; "+
			"every run is checked: each task merged exactly once and closed in the tracker.", n),
		commands: []string{"ralph autopilot --parallel 4   # autopilot.source: checklist of N tasks, cli.command: ./agent.sh",
			strings.TrimSpace(fmt.Sprintf(strings.SplitN(shellTasks, "\n", 2)[0], n)) + " …   # worktree add, agent, merge, worktree remove"}}
	progress("autopilot: %d tasks, --parallel 4", n)
	run, err := b.autopilotRun("autopilot", n, 4, false)
	if err != nil {
		return err
	}
	progress("autopilot: the shell loop")
	shell, err := b.shellTaskLoop("autopilot-shell", n, false)
	if err != nil {
		return err
	}
	ratio := float64(run.wall) / float64(shell.wall)
	s.figures = append(s.figures,
		figure{name: "autopilot --parallel 4 against one shell loop, trivial tasks", value: fmt.Sprintf("%.2f×", ratio),
			target: "≤ 1.0× (then ≤ 0.5×)", met: ratio <= 1.0},
		figure{name: "ralph autopilot --parallel 4", value: fmt.Sprintf("%s for %d tasks (%s each)", secs(run.wall), n, ms(run.wall/time.Duration(n)))},
		figure{name: "shell loop, one task at a time", value: fmt.Sprintf("%s for %d tasks (%s each)", secs(shell.wall), n, ms(shell.wall/time.Duration(n)))},
		figure{name: "ralph's own CPU per task, --parallel 4", value: ms(run.ownCPU / time.Duration(n)),
			target: "for comparison: the shell loop's git and sh", info: true})
	if err := b.autopilotSized(&s); err != nil {
		return err
	}
	if b.manySlots {
		if err := b.autopilotMany(&s); err != nil {
			return err
		}
	}
	r.add(s)
	return nil
}

// sizedRatioFigure is the name of the sized repository's ratio: the key
// of its whyMissed entry, should a profile explain a miss.
var sizedRatioFigure = fmt.Sprintf("autopilot --parallel 4 against one shell loop, %s-file repository",
	thousands(sizedRepoDirs*sizedRepoFilesDir))

// autopilotSized is the same comparison in a repository of a real
// project's size, where each task's checkout, not the agent, is the
// work: what the trivial repository cannot show of reusing a merged
// task's worktree.
func (b *bench) autopilotSized(s *section) error {
	n, files := b.n(40, 8), sizedRepoDirs*sizedRepoFilesDir
	progress("autopilot: %d tasks in a %s-file repository, --parallel 4", n, thousands(files))
	run, err := b.autopilotRun("autopilot-sized", n, 4, true)
	if err != nil {
		return err
	}
	progress("autopilot: the shell loop in a %s-file repository", thousands(files))
	shell, err := b.shellTaskLoop("autopilot-sized-shell", n, true)
	if err != nil {
		return err
	}
	agents, err := b.agentCPU("autopilot-sized-shell-agents", n, true)
	if err != nil {
		return err
	}
	ratio := float64(run.wall) / float64(shell.wall)
	each := func(d time.Duration) string {
		return fmt.Sprintf("%s for %d tasks (%s each)", secs(d), n, ms(d/time.Duration(n)))
	}
	s.figures = append(s.figures,
		figure{name: sizedRatioFigure, value: fmt.Sprintf("%.2f×", ratio), target: "≤ 1.0× (then ≤ 0.5×)", met: ratio <= 1.0},
		figure{name: fmt.Sprintf("ralph autopilot --parallel 4, %s files", thousands(files)), value: each(run.wall)},
		figure{name: fmt.Sprintf("shell loop, one task at a time, %s files", thousands(files)), value: each(shell.wall)},
		figure{name: fmt.Sprintf("ralph's own CPU per task, --parallel 4, %s files", thousands(files)), value: ms(run.ownCPU / time.Duration(n)),
			target: fmt.Sprintf("for comparison: the shell loop's git and sh, %s a task", ms((shell.cpu-agents)/time.Duration(n))), info: true})
	s.what += fmt.Sprintf(" Then the same with %d tasks in a repository of %s generated files (%d directories of %d, about %d KiB each, "+
		"about %.1f MB, committed once), where a task's checkout is most of its cost.", n, thousands(files), sizedRepoDirs, sizedRepoFilesDir,
		sizedRepoFileSize/1024, float64(files*sizedRepoFileSize)/1e6)
	return nil
}

// autopilotMany is the scale figure (-many): 500 tasks through 32 slots.
func (b *bench) autopilotMany(s *section) error {
	n, slots := b.n(500, 40), 32
	progress("autopilot: %d tasks, --parallel %d", n, slots)
	run, err := b.autopilotRun("autopilot-many", n, slots, false)
	if err != nil {
		return err
	}
	s.figures = append(s.figures,
		figure{name: fmt.Sprintf("ralph autopilot --parallel %d, %d trivial tasks", slots, n),
			value:  fmt.Sprintf("%s (%s a task), every task merged once", secs(run.wall), ms(run.wall/time.Duration(n))),
			target: "every task merged once", met: true},
		figure{name: fmt.Sprintf("ralph's own CPU per task, --parallel %d", slots), value: ms(run.ownCPU / time.Duration(n)),
			target: "reported", info: true},
		figure{name: fmt.Sprintf("longest a slot stood free while a task was ready and the merge queue had room, --parallel %d", slots),
			value: ms(run.idleOpen), target: "reported: the coordinator's step between one task and the next", info: true},
		figure{name: fmt.Sprintf("longest a slot stood free while a task was ready, --parallel %d", slots), value: ms(run.idle),
			target: "reported: the above, and the time starts are held while more finished tasks wait to merge than there are slots", info: true})
	s.commands = append(s.commands, "go run ./internal/benchrun -many   # adds 500 tasks through --parallel 32")
	return nil
}

// autopilotTiming is one autopilot run.
type autopilotTiming struct {
	wall time.Duration
	// ownCPU is the CPU time of the autopilot and everything it ran, less
	// the agents' (timed apart: the same agent runs from sh).
	ownCPU time.Duration
	// idle is the longest a slot stood free between tasks while tasks
	// were still waiting to start; idleOpen leaves out the time starts
	// were held behind the merge queue (see slotIdle).
	idle, idleOpen time.Duration
}

func (b *bench) autopilotRun(name string, n, slots int, sized bool) (autopilotTiming, error) {
	dir, err := b.taskRepo(name, n, sized)
	if err != nil {
		return autopilotTiming{}, err
	}
	cmd := exec.Command(b.ralph, "autopilot", "--parallel", fmt.Sprint(slots))
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return autopilotTiming{}, fmt.Errorf("ralph autopilot --parallel %d in %s: %w\n%s", slots, dir, err, tail(out.String()))
	}
	if err := checkAllMerged(dir, n); err != nil {
		return autopilotTiming{}, fmt.Errorf("ralph autopilot --parallel %d in %s: %w", slots, dir, err)
	}
	agents, err := b.agentCPU(name+"-agents", n, sized)
	if err != nil {
		return autopilotTiming{}, err
	}
	idle, open, err := slotIdle(dir, n)
	if err != nil {
		return autopilotTiming{}, err
	}
	return autopilotTiming{wall: wall, ownCPU: cpu(cmd.ProcessState) - agents, idle: idle, idleOpen: open}, nil
}

// shellTaskLoop times the shell loop on n tasks, once.
func (b *bench) shellTaskLoop(name string, n int, sized bool) (timing, error) {
	dir, err := b.taskRepo(name, n, sized)
	if err != nil {
		return timing{}, err
	}
	t, err := proc{dir: dir, args: []string{"sh", "-c", fmt.Sprintf(shellTasks, n)}}.once()
	if err != nil {
		return t, err
	}
	return t, checkMergedOnce(dir, n, "Merge branch 'ralph/")
}

// agentCPU is the CPU time of n runs of the task agent, each in a
// worktree of its own task, from sh: what the autopilot's figure leaves
// out as the agents' (in a sized repository when the run's was: the
// agent's commit reads the index, which grows with the tree).
func (b *bench) agentCPU(name string, n int, sized bool) (time.Duration, error) {
	dir, err := b.taskRepo(name, 1, sized)
	if err != nil {
		return 0, err
	}
	script := fmt.Sprintf(`mkdir -p .worktrees/task-1 && git worktree add -q --detach .worktrees/task-1 main && cd .worktrees/task-1 &&
i=0; while [ $i -lt %d ]; do echo Task | ../../agent.sh >/dev/null; i=$((i+1)); done`, n)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("the agents alone: %w\n%s", err, out)
	}
	return cpu(cmd.ProcessState), nil
}

// cpu is the user and system time of a finished process and of the
// processes it waited for.
func cpu(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// checkAllMerged checks an autopilot's work: each of the n tasks merged
// exactly once onto main, its file there, and the checklist all ticked.
func checkAllMerged(dir string, n int) error {
	if err := checkMergedOnce(dir, n, "ralph: merge "); err != nil {
		return err
	}
	todo, err := os.ReadFile(filepath.Join(dir, "TODO.md"))
	if err != nil {
		return err
	}
	if open := strings.Count(string(todo), "- [ ]"); open > 0 {
		return fmt.Errorf("%d of %d tasks are still open in TODO.md after the run", open, n)
	}
	return nil
}

// checkMergedOnce checks that main's first-parent history has exactly n
// merges whose subjects start with prefix, one per task, and each task's
// file.
func checkMergedOnce(dir string, n int, prefix string) error {
	out, err := exec.Command("git", "-C", dir, "log", "--first-parent", "--format=%s", "main").Output()
	if err != nil {
		return err
	}
	seen := map[string]int{}
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				seen[strings.Trim(f[0], "'")]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		task := fmt.Sprintf("task-%d", i)
		if c := seen[task]; c != 1 {
			return fmt.Errorf("%s was merged %d times, not once", task, c)
		}
		if _, err := os.Stat(filepath.Join(dir, task+".txt")); err != nil {
			return fmt.Errorf("%s's file is not on main: %w", task, err)
		}
	}
	if len(seen) != n {
		return fmt.Errorf("%d tasks merged, not %d", len(seen), n)
	}
	return nil
}

// slotIdle is the longest a slot stood free between tasks while tasks
// were still waiting to start (the first n assignments), as the
// autopilot's log in dir tells it; open leaves out the time starts were
// held because more finished tasks waited to merge than there are slots
// (the autopilot's backpressure): the time a slot stood free while a task
// was ready and the merge queue had room.
func slotIdle(dir string, n int) (all, open time.Duration, err error) {
	f, err := os.Open(filepath.Join(dir, ".ralph", "autopilot-events.jsonl"))
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }()
	type free struct {
		at   time.Time
		open time.Duration
	}
	freed := map[string]*free{}
	st := runfiles.NewAutopilotState()
	assigned := 0
	var last time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		ev, err := events.ParseLine(sc.Bytes())
		if err != nil {
			return 0, 0, err
		}
		// The time since the last line, as the state was until this one.
		if held := len(st.MergeQueue) > st.Parallel; !held && !last.IsZero() {
			for _, fr := range freed {
				fr.open += ev.TS.Sub(last)
			}
		}
		last = ev.TS
		p := runfiles.DecodeAutopilotPayload(ev)
		switch ev.Topic {
		case runfiles.TopicTaskFinished:
			if assigned < n {
				freed[p.Slot] = &free{at: ev.TS}
			}
		case runfiles.TopicTaskAssigned:
			assigned++
			if fr, ok := freed[p.Slot]; ok {
				all, open = max(all, ev.TS.Sub(fr.at)), max(open, fr.open)
				delete(freed, p.Slot)
			}
		}
		st.Apply(ev)
	}
	return all, open, sc.Err()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

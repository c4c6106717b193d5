package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// startupRuns is how many times each one-iteration loop runs: a start-up
// is tens of milliseconds, so the fastest of a few is still a noisy one.
const startupRuns = 15

// startup times a loop of one iteration of the tiny agent against one run
// of the agent from sh: what ralph costs before its agent starts and after
// it ends (its own start, the config, the lock, the checkpoint, git's
// looks, the sandbox's detection and launcher), which every task of the
// autopilot pays once in its loop. Unconfined, as a slot's loop is by
// default (sandbox auto) and with network: deny.
func (b *bench) startup(r *report) error {
	n := max(int(startupRuns*b.scale), 5)
	s := section{title: "Loop start-up",
		what: fmt.Sprintf("`ralph loop` of one iteration of the tiny agent in a small git repository, minus one run of the agent from sh "+
			"(fastest of %d each, wall and CPU, the CPU of the processes each waited for included): what each task of the autopilot "+
			"pays for its loop beside its agent, unconfined and confined as a slot's agent is by default.", n),
		commands: []string{"ralph loop --quiet   # max_iterations: 1, then with sandbox: {mode: auto} and {mode: auto, network: deny}",
			"echo Tick. | ./agent.sh >/dev/null"}}
	w, err := b.workspace("startup", 1, 10, true)
	if err != nil {
		return err
	}
	shell, err := w.shellLoop(1).timeN(n)
	if err != nil {
		return err
	}
	cases := []struct{ name, sandbox string }{
		{"unconfined", ""},
		{"sandbox auto (an autopilot slot's default)", "sandbox:\n  mode: auto\n"},
		{"sandbox auto, network deny", "sandbox:\n  mode: auto\n  network: deny\n"},
	}
	for _, c := range cases {
		progress("startup: %s", c.name)
		if err := os.WriteFile(filepath.Join(w.dir, "ralph.yml"), []byte(loopConfig(1)+c.sandbox), 0o644); err != nil {
			return err
		}
		// The first run is not timed: it leaves what a second run of the
		// same binary finds (the page cache, a recorded probe).
		if _, err := w.loop(b.ralph).once(); err != nil {
			return err
		}
		looped, err := w.loop(b.ralph).timeN(n)
		if err != nil {
			return err
		}
		s.figures = append(s.figures, figure{name: c.name,
			value: fmt.Sprintf("%s wall, %s CPU for one iteration (one agent run from sh: %s wall, %s CPU)",
				ms(looped.wall-shell.wall), ms(looped.cpu-shell.cpu), ms(shell.wall), ms(shell.cpu)),
			target: "for comparison: what each autopilot task's loop costs beside its agent", info: true})
	}
	r.add(s)
	return nil
}

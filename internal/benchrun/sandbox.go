package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/internal/sandbox"
)

// sandboxCost times the same loop of the tiny agent unconfined and
// confined by each mechanism this machine has: the difference per
// iteration is what the sandbox costs (ralph re-executed as the Landlock
// launcher and its rules, or bubblewrap's start-up).
func (b *bench) sandboxCost(r *report) error {
	n := b.n(200, 10)
	s := section{title: "Sandbox",
		what: fmt.Sprintf("%d iterations of the tiny agent in a small git repository, unconfined and then confined (`sandbox: {mode: M}`): "+
			"the difference divided by %d is what confining an agent adds to each iteration. A mechanism this machine lacks is left out.", n, n),
		commands: []string{"ralph loop --quiet   # max_iterations: N, no sandbox:", "ralph loop --quiet   # max_iterations: N, sandbox: {mode: landlock} (then bwrap)"}}
	w, err := b.workspace("sandbox", n, 10, true)
	if err != nil {
		return err
	}
	free, err := w.loop(b.ralph).time()
	if err != nil {
		return err
	}
	support := sandbox.Detect()
	for _, mode := range []sandbox.Mode{sandbox.ModeLandlock, sandbox.ModeBwrap} {
		if _, _, err := support.Resolve(mode, sandbox.NetworkAllow); err != nil {
			progress("sandbox: %s left out: %v", mode, err)
			continue
		}
		progress("sandbox: %s", mode)
		config := loopConfig(n) + "sandbox:\n  mode: " + string(mode) + "\n"
		if err := os.WriteFile(filepath.Join(w.dir, "ralph.yml"), []byte(config), 0o644); err != nil {
			return err
		}
		confined, err := w.loop(b.ralph).time()
		if err != nil {
			return err
		}
		per := (confined.wall - free.wall) / time.Duration(n)
		// No target: next to an agent's own seconds per iteration the
		// figure is small either way; it is here to be watched.
		s.figures = append(s.figures, figure{name: "sandbox cost per iteration, " + string(mode),
			value:  fmt.Sprintf("%s (an iteration of the tiny agent takes %.2f× as long as unconfined)", ms(per), ratio(confined.wall, free.wall)),
			target: "for comparison: an agent CLI's own start-up takes hundreds of ms", info: true})
	}
	s.figures = append(s.figures, figure{name: "ralph loop, unconfined", value: fmt.Sprintf("%s for %d iterations", ms(free.wall), n)})
	r.add(s)
	return nil
}

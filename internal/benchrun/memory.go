package main

import (
	"fmt"
)

// memory compares ralph's peak resident set after a short and a long run
// of the tiny agent: what a run keeps must not grow with its length.
func (b *bench) memory(r *report) error {
	short, long := b.n(100, 100), b.n(10_000, 1000)
	rss := map[int]int64{}
	for _, n := range []int{short, long} {
		progress("memory: %d iterations", n)
		w, err := b.workspace(fmt.Sprintf("memory-%d", n), n, 10, true)
		if err != nil {
			return err
		}
		t, err := w.loop(b.ralph).once()
		if err != nil {
			return err
		}
		rss[n] = t.maxRSS
	}
	growth := float64(rss[long])/float64(rss[short]) - 1
	r.add(section{title: "Memory over a long run",
		what:     fmt.Sprintf("ralph's peak resident set (getrusage) after %d and after %d iterations of the tiny agent.", short, long),
		commands: []string{"ralph loop --quiet   # max_iterations: N"},
		figures: []figure{
			{name: fmt.Sprintf("peak RSS after %d iterations", short), value: mib(rss[short])},
			{name: fmt.Sprintf("peak RSS after %d iterations", long), value: mib(rss[long])},
			{name: "peak RSS growth, long run over short", value: fmt.Sprintf("%+.1f%%", growth*100), target: "≤ 10%", met: growth <= 0.10},
		}})
	return nil
}

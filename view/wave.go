package view

import (
	"fmt"

	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// WaveText is a wave's progress as every view says it: "wave of hat
// reviewer: 2 of 3 workers done (1 failed), 3 at once".
func WaveText(w runfiles.WaveProgress) string {
	s := fmt.Sprintf("wave of hat %s: %d of %s done", w.Hat, w.Done, plural.Count(w.Total, "worker", "workers"))
	if w.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", w.Failed)
	}
	if w.Concurrency > 0 && w.Concurrency < w.Total {
		s += fmt.Sprintf(", %d at once", w.Concurrency)
	}
	return s
}

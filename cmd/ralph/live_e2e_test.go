package main

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveViewInTmux runs a loop in a real terminal (a detached tmux
// session 120×30) and reads the screen while the agent works: the panel is
// at the bottom with the run's figures, and it is gone once the run ends.
func TestLiveViewInTmux(t *testing.T) {
	t.Parallel()
	tm := newTmux(t)
	w := newWorkspace(t)
	w.write("ralph.yml", headlessConfig+claudeCLI())
	sc := headlessScript()
	sc.ByHat["builder"][0].SleepMS = 8000 // time to look at the screen, even on a loaded machine
	w.script(sc)

	shell := fmt.Sprintf("cd %q && %q run; echo RALPH-EXIT=$?; sleep 60", w.dir, ralphBin)
	live := tm.session("live", 120, 30, w.agentEnv(), shell)
	capture := live.capture

	// The builder's tools and tokens are in while it sleeps.
	screen := waitForScreen(t, capture, "reads 1 · writes 1 · shell 1", time.Minute)
	t.Logf("the screen while the builder works:\n%s", screen)
	lines := nonBlankLines(screen)
	require.GreaterOrEqual(t, len(lines), 5)
	panel := lines[len(lines)-5:]
	assert.Regexp(t, `^── ralph · run \d{8}-\d{6}-[0-9a-f]{6} · \d+s ─+$`, panel[0], "the header, as wide as the terminal")
	assert.Equal(t, 119, len([]rune(panel[0])), "the panel spans the width but its last column")
	assert.Contains(t, panel[1], "iteration 2/10 · builder (claude) · working")
	assert.Contains(t, panel[2], "cost $0.0153 · tokens 2.1k (1.7k in, 380 out) · reads 1 · writes 1 · shell 1")
	assert.Contains(t, panel[3], "last commit  -")
	assert.Contains(t, panel[4], "last event   build.task → builder")
	assert.Contains(t, screen, "| Wrote hello.txt.", "the agent's text scrolls above the panel")
	// Nothing happens while the agent sleeps; the clock still moves. (Any
	// second past the first will do: on a loaded machine a capture can
	// take longer than a second.)
	waitForScreenMatch(t, capture, regexp.MustCompile(`builder \(claude\) · working [2-9]s`), time.Minute)

	screen = waitForScreen(t, capture, "RALPH-EXIT=0", 2*time.Minute)
	t.Logf("the screen at the end:\n%s", screen)
	assert.Contains(t, screen, "ended: completed (exit 0)")
	assert.NotContains(t, screen, "── ralph ·", "the panel is removed before the summary")
	assert.NotContains(t, screen, "last event", "no panel line is left behind")
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// TestRenderPanelGolden renders the panel in each phase, and cut to a
// narrow terminal.
func TestRenderPanelGolden(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := start.Add(83 * time.Second)
	running := panelState{runID: "20261122-100000-abcdef", started: start, n: 3, max: 12, hat: "builder", backend: "claude",
		phase: phaseRunning, phaseSince: now.Add(-12 * time.Second),
		doneUsage: events.Usage{InputTokens: 10_100, OutputTokens: 2_150}, doneCost: 0.0123,
		doneTools: events.ToolCounts{Read: 3, Write: 1, Shell: 2}, liveUsage: events.Usage{InputTokens: 900},
		liveCost: 0.001, liveTools: events.ToolCounts{Read: 1, Write: 1, Shell: 1},
		lastCommit: "0123456789 export: add --json", lastEvent: "build.done → reviewer"}
	waiting := running
	waiting.phase, waiting.waitUntil = phaseWaiting, now.Add(95*time.Second)
	between := running
	between.phase, between.lastOutcome = phaseBetween, "failure"
	confirming := running
	confirming.hat, confirming.confirming = "ralph", true

	var b strings.Builder
	for _, tc := range []struct {
		name  string
		st    panelState
		width int
	}{
		{"before the first iteration", panelState{started: start, max: 12}, 100},
		{"an agent running", running, 100},
		{"confirming a completion claim", confirming, 100},
		{"waiting for a rate limit", waiting, 100},
		{"between iterations", between, 100},
		{"a 40-column terminal", running, 40},
	} {
		fmt.Fprintf(&b, "== %s (width %d)\n", tc.name, tc.width)
		for _, line := range renderPanel(tc.st, now, tc.width) {
			require.LessOrEqual(t, len([]rune(line)), tc.width-1, "a line fits in the width, leaving the last column: %q", line)
			b.WriteString(line + "\n")
		}
	}
	assertGolden(t, "tty/panel.golden", b.String())
}

// TestLiveScreenKeepsThePanelBelowText checks the escape sequences: text
// goes where the panel was, the panel is drawn again below it, and removing
// it leaves plain text.
func TestLiveScreenKeepsThePanelBelowText(t *testing.T) {
	var out bytes.Buffer
	frame := 0
	s := &liveScreen{w: &out, width: func() int { return 80 }, panel: func(int) []string {
		frame++
		return []string{fmt.Sprintf("panel %d", frame), "second line"}
	}}

	_, err := s.Write([]byte("before the run\n"))
	require.NoError(t, err)
	s.redraw()
	assert.Equal(t, "before the run\n", out.String(), "no panel before the run starts")
	s.visible = true
	out.Reset()

	_, err = s.Write([]byte("hello\n"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n\x1b[1mpanel 1\x1b[0m\nsecond line", out.String(), "no panel yet: text, then the panel")

	out.Reset()
	_, err = s.Write([]byte("world\n"))
	require.NoError(t, err)
	assert.Equal(t, "\r\x1b[1A\x1b[Jworld\n\x1b[1mpanel 2\x1b[0m\nsecond line", out.String(),
		"back to the panel's first line, clear, text, panel")

	out.Reset()
	s.redraw()
	assert.Equal(t, "\r\x1b[1A\x1b[J\x1b[1mpanel 3\x1b[0m\nsecond line", out.String())

	out.Reset()
	s.remove()
	s.redraw()
	_, err = s.Write([]byte("summary\n"))
	require.NoError(t, err)
	assert.Equal(t, "\r\x1b[1A\x1b[Jsummary\n", out.String(), "once removed, the panel stays away")
}

func TestTTYReporterFollowsTheRun(t *testing.T) {
	var out bytes.Buffer
	now := stepClock()
	r := newTTYReporter(&out, func() int { return 100 }, now, viewOptions{quiet: true})
	r.LoopStarted(engine.RunInfo{RunID: "run-1", MaxIter: 5})
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "secret agent text"})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolRead, Path: "a.go"})
	r.Activity(it, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 1500, OutputTokens: 10}, CostUSD: 0.5})
	r.Commit(it, engine.Commit{Hash: "abcdef0123456789", Subject: "add a"})
	r.EventAccepted(events.Event{Topic: "build.done"}, []string{"reviewer"}, "")

	panel := strings.Join(r.panel(100), "\n")
	assert.Contains(t, panel, "iteration 1/10 · builder (claude) · working")
	assert.Contains(t, panel, "cost $0.5000 · tokens 1.5k (1.5k in, 10 out) · reads 1 · writes 0 · shell 0")
	assert.Contains(t, panel, "last commit  abcdef0123 add a")
	assert.Contains(t, panel, "last event   build.done → reviewer")

	r.IterationFinished(it, events.AgentResult{Usage: events.Usage{InputTokens: 2000, OutputTokens: 20}, CostUSD: 0.25,
		Tools: events.ToolCounts{Read: 1}})
	panel = strings.Join(r.panel(100), "\n")
	assert.Contains(t, panel, "cost $0.2500 · tokens 2k (2k in, 20 out) · reads 1", "the result replaces the live figures")

	r.LoopFinished(engine.Summary{RunID: "run-1", Reason: engine.ReasonCompleted})
	r.Close(nil)
	screen := out.String()
	assert.NotContains(t, screen, "secret agent text", "--quiet hides the agent's text")
	assert.True(t, strings.HasSuffix(screen, "ralph: 1 commit: abcdef0123 add a\n"), "the summary comes last, after the panel is gone:\n%q", screen)
	assert.Contains(t, screen, "\r\x1b[4A\x1b[Jralph: run run-1 ended: completed", "the panel is erased before the summary")
}

// TestLiveViewInTmux runs a loop in a real terminal (a detached tmux
// session 120×30) and reads the screen while the agent works: the panel is
// at the bottom with the run's figures, and it is gone once the run ends.
func TestLiveViewInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed; the live view is tested in a pseudo-terminal through tmux")
	}
	w := newWorkspace(t)
	w.write("ralph.yml", headlessConfig+claudeCLI())
	script := headlessScript()
	builder := script["by_hat"].(map[string]any)["builder"].([]step)
	builder[0]["sleep_ms"] = 8000 // time to look at the screen, even on a loaded machine
	w.script(script)

	// A server of our own (-L), so no user's tmux is touched, and killed
	// at the end.
	socket := fmt.Sprintf("ralph-test-%d", os.Getpid())
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", socket}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", socket, "kill-server").Run() })
	shell := fmt.Sprintf("cd %q && %q run; echo RALPH-EXIT=$?; sleep 60", w.dir, ralphBin)
	tm("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "-s", "live",
		"-e", "SCRIPTAGENT_SCRIPT="+filepath.Join(w.state, "script.json"), "-e", "SCRIPTAGENT_STATE="+w.state,
		"-e", "TERM=xterm-256color", shell)
	capture := func() string { return tm("capture-pane", "-p", "-t", "live") }

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

// waitForScreen captures the screen until it shows want, or fails after
// timeout with the last screen.
func waitForScreen(t *testing.T, capture func() string, want string, timeout time.Duration) string {
	t.Helper()
	return waitForScreenMatch(t, capture, regexp.MustCompile(regexp.QuoteMeta(want)), timeout)
}

// waitForScreenMatch is waitForScreen for a pattern.
func waitForScreenMatch(t *testing.T, capture func() string, want *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := capture()
		if want.MatchString(screen) {
			return screen
		}
		select {
		case <-deadline.C:
			t.Fatalf("after %s the screen does not show %q:\n%s", timeout, want, screen)
		case <-tick.C:
		}
	}
}

func nonBlankLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	return out
}

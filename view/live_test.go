package view

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
	"github.com/ralph-loop/ralph/runfiles"
)

// TestRenderPanelGolden renders the panel in each phase, and cut to a
// narrow terminal.
func TestRenderPanelGolden(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := start.Add(83 * time.Second)
	running := Run{ID: "20261122-100000-abcdef", Started: start, N: 3, Max: 12, Hat: "builder", Backend: "claude",
		Phase: PhaseRunning, PhaseSince: now.Add(-12 * time.Second),
		Done: Figures{Usage: events.Usage{InputTokens: 10_100, OutputTokens: 2_150}, CostUSD: 0.0123,
			Tools: events.ToolCounts{Read: 3, Write: 1, Shell: 2}},
		Live:      Figures{Usage: events.Usage{InputTokens: 900}, CostUSD: 0.001, Tools: events.ToolCounts{Read: 1, Write: 1, Shell: 1}},
		Commits:   []engine.Commit{{Hash: "0123456789abcdef", Subject: "export: add --json"}},
		LastEvent: "build.done → reviewer"}
	waiting := running
	waiting.Phase, waiting.WaitUntil = PhaseWaiting, now.Add(95*time.Second)
	between := running
	between.Phase, between.LastOutcome = PhaseBetween, "failure"
	confirming := running
	confirming.Hat, confirming.Confirming = "ralph", true

	var b strings.Builder
	for _, tc := range []struct {
		name  string
		st    Run
		width int
	}{
		{"before the first iteration", Run{Started: start, Max: 12}, 100},
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
	golden.Assert(t, "testdata/tty/panel.golden", b.String())
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
	assert.Equal(t, "hello\npanel 1\nsecond line", out.String(), "no panel yet: text, then the panel")

	out.Reset()
	_, err = s.Write([]byte("world\n"))
	require.NoError(t, err)
	assert.Equal(t, "\r\x1b[A\x1b[Jworld\npanel 2\nsecond line", out.String(),
		"back to the panel's first line, clear, text, panel")

	out.Reset()
	s.redraw()
	assert.Equal(t, "\r\x1b[A\x1b[Jpanel 3\nsecond line", out.String())

	out.Reset()
	s.remove()
	s.redraw()
	_, err = s.Write([]byte("summary\n"))
	require.NoError(t, err)
	assert.Equal(t, "\r\x1b[A\x1b[Jsummary\n", out.String(), "once removed, the panel stays away")
}

func TestTTYReporterFollowsTheRun(t *testing.T) {
	var out bytes.Buffer
	now := stepClock()
	m := NewModel(now)
	live := NewLive(&out, func() int { return 100 }, m, now, Options{Quiet: true})
	r := Tee(m, live)
	r.LoopStarted(engine.RunInfo{RunID: "run-1", MaxIter: 5})
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "secret agent text"})
	r.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolRead, Path: "a.go"})
	r.Activity(it, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 1500, OutputTokens: 10}, CostUSD: 0.5})
	r.Commit(it, engine.Commit{Hash: "abcdef0123456789", Subject: "add a"})
	r.EventAccepted(events.Event{Topic: "build.done"}, []string{"reviewer"}, "")

	panel := strings.Join(live.panel(100), "\n")
	assert.Contains(t, panel, "iteration 1/10 · builder (claude) · working")
	assert.Contains(t, panel, "cost $0.5000 · tokens 1.5k (1.5k in, 10 out) · reads 1 · writes 0 · shell 0")
	assert.Contains(t, panel, "last commit  abcdef0123 add a")
	assert.Contains(t, panel, "last event   build.done → reviewer")

	r.IterationFinished(it, events.AgentResult{Usage: events.Usage{InputTokens: 2000, OutputTokens: 20}, CostUSD: 0.25,
		Tools: events.ToolCounts{Read: 1}})
	panel = strings.Join(live.panel(100), "\n")
	assert.Contains(t, panel, "cost $0.2500 · tokens 2k (2k in, 20 out) · reads 1", "the result replaces the live figures")

	r.LoopFinished(engine.Summary{RunID: "run-1", Reason: runfiles.ReasonCompleted})
	live.Close(nil)
	screen := out.String()
	assert.NotContains(t, screen, "secret agent text", "--quiet hides the agent's text")
	assert.True(t, strings.HasSuffix(screen, "ralph: 1 commit: abcdef0123 add a\n"), "the summary comes last, after the panel is gone:\n%q", screen)
	assert.Contains(t, screen, "\r\x1b[4A\x1b[Jralph: run run-1 ended: completed", "the panel is erased before the summary")
}

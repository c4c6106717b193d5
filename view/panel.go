package view

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

// The run's header is one component: the live view of `ralph loop` keeps
// it at the bottom of the terminal, and `ralph watch` shows it above the
// selected loop.
var (
	panelTitleStyle = lipgloss.NewStyle().Bold(true)
	panelLineStyle  = lipgloss.NewStyle()
)

// RunPanel renders a run's header as styled lines of at most width-1
// columns (the last column is left free so no terminal wraps a full line):
// the run and its clock, the iteration, the figures, the last commit and
// the last event.
func RunPanel(s Run, now time.Time, width int) []string {
	lines := renderPanel(s, now, width)
	for i, l := range lines {
		style := panelLineStyle
		if i == 0 {
			style = panelTitleStyle
		}
		lines[i] = style.Render(l)
	}
	return lines
}

// renderPanel is the panel's text, unstyled.
func renderPanel(s Run, now time.Time, width int) []string {
	total := s.Total()
	usage, tools := total.Usage, total.Tools
	lines := []string{
		panelHeader(s, now, width),
		" " + iterationLine(s, now),
		fmt.Sprintf(" cost %s · tokens %s (%s in, %s out) · reads %d · writes %d · shell %d",
			CostText(total.Cost()), humanCount(usage.Total()), humanCount(usage.InputTokens),
			humanCount(usage.OutputTokens), tools.Read, tools.Write, tools.Shell),
		" last commit  " + orDash(s.LastCommit()),
		" last event   " + orDash(s.LastEvent),
	}
	if s.Chain != "" {
		lines = append(lines[:1], append([]string{" " + s.Chain}, lines[1:]...)...)
	}
	for i, l := range lines {
		lines[i] = truncateCols(Sanitize(l), width-1)
	}
	return lines
}

func panelHeader(s Run, now time.Time, width int) string {
	title := "── ralph "
	if s.ID != "" {
		title += "· run " + s.ID + " "
	}
	title += "· " + clockDuration(s.Elapsed(now)) + " "
	if fill := width - 1 - len([]rune(title)); fill > 0 {
		title += strings.Repeat("─", fill)
	}
	return title
}

func iterationLine(s Run, now time.Time) string {
	if s.Ended != nil {
		return fmt.Sprintf("iteration %s · ended: %s (exit %d)", iterationOf(s), s.Ended.Reason, s.Ended.ExitCode)
	}
	if s.Phase == PhaseStarting && !s.Gone {
		return fmt.Sprintf("iteration 0/%d · starting", s.Max)
	}
	who := orDash(s.Hat)
	if s.Confirming {
		who += ", confirming the completion claim"
	}
	line := fmt.Sprintf("iteration %s · %s (%s) · ", iterationOf(s), who, agentOf(s))
	if s.Gone {
		return line + "not running (cut off; " + resumeCmd(s.Chain != "") + ")"
	}
	switch s.Phase {
	case PhaseRunning:
		if s.Wave != nil {
			return line + WaveText(*s.Wave) + " · " + clockDuration(now.Sub(s.PhaseSince))
		}
		return line + "working " + clockDuration(now.Sub(s.PhaseSince))
	case PhasePaced:
		if s.Paced != nil {
			return line + PacedText(*s.Paced)
		}
	case PhaseWaiting:
		return line + "rate limited, retrying in " + clockDuration(max(s.WaitUntil.Sub(now), 0))
	case PhaseAwaitingHuman:
		if s.Question != nil {
			return line + "waiting for an answer: " + s.Question.Text
		}
	case PhaseStarting, PhaseBetween:
	}
	return line + string(s.LastOutcome) + ", deciding what next"
}

// iterationOf is "n/max", or "n" where the limit is not known (a remote
// loop whose log does not say).
func iterationOf(s Run) string {
	if s.Max == 0 {
		return fmt.Sprint(s.N)
	}
	return fmt.Sprintf("%d/%d", s.N, s.Max)
}

// clockDuration is a duration in whole seconds, for clocks that tick once
// a second: 0s, 12s, 1m23s.
func clockDuration(d time.Duration) string {
	return humanDuration(d.Truncate(time.Second))
}

// truncateCols cuts s to n runes, marking the cut with "…". Runes stand in
// for columns: the panel's own text is narrow, and an agent's wide
// characters at worst push a line one or two columns further.
func truncateCols(s string, n int) string {
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// agentOf names the run's agent CLI and, when it is confined, how.
func agentOf(s Run) string {
	if s.Sandbox == "" || s.Sandbox == "off" {
		return orDash(s.Backend)
	}
	return orDash(s.Backend) + ", sandbox " + s.Sandbox
}

package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ralph-loop/ralph/view"
)

var (
	titleStyle    = lipgloss.NewStyle().Bold(true)
	selectedStyle = lipgloss.NewStyle().Reverse(true)
	dimStyle      = lipgloss.NewStyle().Faint(true)
	noticeStyle   = lipgloss.NewStyle().Bold(true)
)

func (m *model) View() tea.View {
	v := tea.NewView(m.render(m.opts.Now()))
	v.AltScreen = true
	v.WindowTitle = "ralph watch"
	return v
}

// render draws the whole screen: height lines of at most width columns.
func (m *model) render(now time.Time) string {
	width, height := max(m.width, 20), max(m.height, 5)
	var lines []string
	switch {
	case m.help.ShowAll:
		lines = append([]string{rule("ralph watch · help", width)}, helpLines(m.help)...)
	case m.payload != nil:
		lines = m.payloadLines(width, height-1)
	case m.pane != nil:
		lines = m.scrolled(m.pane.title, m.pane.body, width, height-1)
	case m.answer != nil:
		answer := m.answer.lines(width)
		lines = append(headLines(m.mainLines(now, width, height-1), max(height-1-len(answer), 0)), answer...)
	case m.guide != nil:
		guide := m.guide.lines(width)
		lines = append(headLines(m.mainLines(now, width, height-1), max(height-1-len(guide), 0)), guide...)
	default:
		lines = m.mainLines(now, width, height-1)
	}
	lines = headLines(lines, height-1)
	lines = append(lines, m.footer())
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width-1, "…")
	}
	return strings.Join(lines, "\n")
}

// mainLines are the autopilot and its slots (when there is one), the
// selected loop's header, its activity and its events.
func (m *model) mainLines(now time.Time, width, height int) []string {
	var top []string
	if ap := m.w.Autopilot; ap != nil {
		top = append(top, autopilotLines(ap, now, width)...)
		top = append(top, m.slotLines(now)...)
	}
	l := m.w.Loop
	if l == nil {
		top = append(top, "", "  "+m.waiting())
		if ap := m.w.Autopilot; ap != nil && len(ap.Events) > 0 {
			top = append(top, "", rule("autopilot events", width))
			var evs []string
			for _, e := range ap.Events {
				evs = append(evs, "  "+eventLine(e, m.opts.Loc))
			}
			top = append(top, tailLines(evs, max(height-len(top), 0))...)
		}
		return top
	}
	top = append(top, view.RunPanel(l.Run, now, width)...)
	top = append(top, " objective    "+view.Sanitize(view.FirstLine(orDash(l.Objective))),
		" hats         "+m.hatLine(l))
	rest := height - len(top) - 2 // the two panes' titles
	if rest < 2 {
		return top
	}
	actN := rest / 3
	evN := rest - actN
	out := append(top, rule("agent activity"+m.activityNote(), width))
	out = append(out, tailLines(activityLines(l), actN)...)
	out = append(out, rule(m.eventsTitle(), width))
	return append(out, m.eventLines(evN)...)
}

func (m *model) waiting() string {
	if m.w.Autopilot != nil {
		if m.w.Autopilot.Ended != nil {
			return "the autopilot's run has ended; no loop runs in a slot"
		}
		return "no task in a slot yet"
	}
	return "no run here yet: waiting for `ralph loop` or `ralph autopilot` to start in " + m.opts.Dir
}

func (m *model) activityNote() string {
	if l := m.w.Loop; l != nil && l.Worker != "" {
		return " (runs on worker " + l.Worker + "; only its events come here)"
	}
	return ""
}

func (m *model) eventsTitle() string {
	if m.follow {
		return "events (following)"
	}
	return "events (f follows)"
}

// autopilotLines are the autopilot's title and its counts.
func autopilotLines(ap *view.AutopilotRun, now time.Time, width int) []string {
	state := "not running"
	switch {
	case ap.Ended != nil:
		state = fmt.Sprintf("ended: %s (exit %d)", ap.Ended.Reason, ap.Ended.ExitCode)
	case ap.Running && ap.Paused:
		state = "paused"
	case ap.Running:
		state = "running"
	}
	elapsed := ""
	if !ap.StartedAt.IsZero() {
		end := now
		if ap.Ended != nil {
			end = ap.Ended.At
		}
		elapsed = clock(end.Sub(ap.StartedAt))
	}
	last := "-"
	if n := len(ap.Events); n > 0 {
		last = ap.Events[n-1].Event.Topic + " " + ap.Events[n-1].Text
	}
	lines := []string{
		titleStyle.Render(rule(joinWords("ralph autopilot", "run "+ap.RunID, state, elapsed), width)),
		fmt.Sprintf(" source %s · %d slots · %d started · %d completed · %d failed · %d to merge",
			orDash(ap.Source), ap.Parallel, ap.Started, ap.Completed, ap.Failed, ap.Queued),
		" last         " + view.Sanitize(view.FirstLine(last)),
	}
	for _, r := range ap.Reviews {
		lines = append(lines, " in review    "+view.Sanitize(view.ReviewText(r)))
	}
	return lines
}

// slotLines are a line per slot, the selected one marked.
func (m *model) slotLines(now time.Time) []string {
	var out []string
	for i, s := range m.w.Slots {
		mark := "  "
		if i == m.w.Selected {
			mark = "> "
		}
		where := ""
		if s.Worker != "" {
			where = "on " + s.Worker
		}
		line := fmt.Sprintf("%sslot %s  %-10s %-10s #%-3d %6s  %s", mark, s.Slot, s.Task, orDash(s.Hat), s.Iteration,
			clock(now.Sub(s.StartedAt)), joinWords(where, orDash(s.LastEvent)))
		if i == m.w.Selected {
			line = selectedStyle.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// hatLine is where the loop is among its hats: its place in the hats'
// graph when the config loads, else the run's hats in config order.
func (m *model) hatLine(l *view.LoopView) string {
	if g := m.graphs.Of(l); g != nil && l.Run.Hat != "" {
		return position(g, l.Run.Hat)
	}
	return hatPath(l.Hats, l.Run.Hat)
}

// hatPath is the run's hats with the current one bracketed.
func hatPath(hats []string, current string) string {
	all := append([]string{"ralph"}, hats...)
	found := false
	for i, h := range all {
		if h == current {
			all[i], found = "["+h+"]", true
		}
	}
	s := strings.Join(all, " · ")
	if !found && current != "" {
		s += " · [" + current + "]"
	}
	return s
}

// activityLines are the loop's agent activity, newest last.
func activityLines(l *view.LoopView) []string {
	if len(l.Activity) == 0 {
		return []string{dimStyle.Render("  (no agent activity recorded yet)")}
	}
	var out []string
	for _, a := range l.Activity {
		prefix := fmt.Sprintf("  #%d %s ", a.Iteration, a.Hat)
		for _, line := range view.ActivityLines(a) {
			out = append(out, prefix+view.Sanitize(line))
		}
	}
	return out
}

// eventLines are n lines of the loop's events around the cursor: the
// newest while following.
func (m *model) eventLines(n int) []string {
	l := m.w.Loop
	if len(l.Events) == 0 {
		return []string{dimStyle.Render("  (no events yet)")}
	}
	sel := m.selectedEvent()
	end := min(max(sel+1, n), len(l.Events))
	start := max(end-n, 0)
	var out []string
	for i := start; i < end; i++ {
		e := l.Events[i]
		line := "  " + eventLine(e, m.opts.Loc)
		if i == sel {
			line = selectedStyle.Render("> " + eventLine(e, m.opts.Loc))
		}
		out = append(out, line)
	}
	return out
}

func eventLine(e view.EventLine, loc *time.Location) string {
	if e.Err != nil {
		return "malformed line: " + view.FirstLine(e.Text)
	}
	ts := "--:--:--"
	if !e.Event.TS.IsZero() {
		ts = e.Event.TS.In(loc).Format("15:04:05")
	}
	return fmt.Sprintf("%s %-20s %s", ts, e.Event.Topic, view.Sanitize(view.FirstLine(e.Text)))
}

// payloadLines show the open event as indented JSON.
func (m *model) payloadLines(width, height int) []string {
	e := m.payload
	title := fmt.Sprintf("event %s · offset %d · esc closes", e.Event.Topic, e.Offset)
	var body string
	if e.Err != nil {
		body = e.Text
	} else {
		data, _ := json.Marshal(e.Event)
		var buf bytes.Buffer
		if json.Indent(&buf, data, "", "  ") == nil {
			body = buf.String()
		} else {
			body = string(data)
		}
	}
	return m.scrolled(title, body, width, height)
}

// scrolled is body under its title, its lines wrapped to width and shown
// from the scroll position on.
func (m *model) scrolled(title, body string, width, height int) []string {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		l = view.Sanitize(l)
		for len([]rune(l)) > width-1 {
			r := []rune(l)
			lines = append(lines, string(r[:width-1]))
			l = string(r[width-1:])
		}
		lines = append(lines, l)
	}
	m.scroll = min(m.scroll, max(len(lines)-(height-1), 0))
	return append([]string{titleStyle.Render(rule(title, width))}, lines[m.scroll:]...)
}

func (m *model) footer() string {
	switch {
	case m.confirmStop:
		return noticeStyle.Render("stop " + m.what() + "? press s again to stop, any other key to cancel")
	case m.notice != "":
		return noticeStyle.Render(m.notice)
	case m.payload != nil, m.pane != nil:
		return dimStyle.Render(m.help.ShortHelpView(keys.payload()))
	case m.answer != nil:
		return dimStyle.Render("enter sends · a number alone picks that option · esc cancels")
	case m.guide != nil:
		return dimStyle.Render("enter sends: the next iteration's prompt carries it · esc cancels")
	case m.w.Loop != nil && m.w.Loop.Run.Question != nil:
		return noticeStyle.Render("the loop waits for an answer: press a to answer")
	}
	// A key shown without words (the autopilot's "?", for the width)
	// leaves no double space before the separator.
	return dimStyle.Render(strings.ReplaceAll(m.help.ShortHelpView(keys.short(m.w.Autopilot != nil)), "  ·", " ·"))
}

// rule is "── title ───…" as wide as width-1.
func rule(title string, width int) string {
	s := "── " + title + " "
	if fill := width - 1 - ansi.StringWidth(s); fill > 0 {
		s += strings.Repeat("─", fill)
	}
	return s
}

// tailLines keeps the last n lines, or pads to n with blank lines.
func tailLines(lines []string, n int) []string {
	if n <= 0 {
		return nil
	}
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return pad(lines, n)
}

// headLines keeps the first n lines, or pads to n with blank lines.
func headLines(lines []string, n int) []string {
	if n <= 0 {
		return nil
	}
	if len(lines) > n {
		return lines[:n]
	}
	return pad(lines, n)
}

func pad(lines []string, n int) []string {
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

func clock(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	return d.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package view

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// TerminalFd returns the file descriptor behind w when w is a terminal.
// A terminal is what answers the termios ioctl; a pipe, a file or /dev/null
// does not.
func TerminalFd(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return 0, false
	}
	return fd, true
}

// TerminalWidth is the terminal's width in columns, read anew each time so
// a resized window is drawn to its new size; 80 when it cannot be read.
func TerminalWidth(fd int) int {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 80
	}
	return int(ws.Col)
}

// Live is the live view: the same lines as the plain reporter scroll
// by, and a status panel stays at the bottom of the terminal, redrawn in
// place when something changes and once a second for the clocks.
type Live struct {
	text   *Text // writes its lines through screen
	screen *liveScreen
	now    func() time.Time

	mu sync.Mutex
	st panelState

	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

// NewLive starts the live view on w, a terminal whose width width
// reports. Close must be called to stop its clock and remove the panel.
func NewLive(w io.Writer, width func() int, now func() time.Time, opts Options) *Live {
	r := &Live{now: now, stop: make(chan struct{}), stopped: make(chan struct{})}
	r.st.started = now()
	r.screen = &liveScreen{w: w, width: width, panel: r.panel}
	r.text = NewText(r.screen, now, opts)
	go r.tick(time.Second)
	return r
}

// Screen is where other output (the log) must go while the live view is
// on: each line it is written is printed above the panel.
func (r *Live) Screen() io.Writer { return r.screen }

// tick redraws the panel every interval so the elapsed times move while
// nothing else happens, until Close.
func (r *Live) tick(interval time.Duration) {
	defer close(r.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.screen.redraw()
		}
	}
}

// Close stops the clock and removes the panel, so what follows (an error,
// the shell prompt) is printed on a clean line. It may be called twice.
func (r *Live) Close(error) {
	r.stopOnce.Do(func() {
		close(r.stop)
		<-r.stopped
		r.screen.remove()
	})
}

// panel renders the current state for the screen.
func (r *Live) panel(width int) []string {
	r.mu.Lock()
	st := r.st
	r.mu.Unlock()
	return renderPanel(st, r.now(), width)
}

// update changes the panel state under the lock.
func (r *Live) update(f func(*panelState)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.st)
}

func (r *Live) LoopStarted(run engine.RunInfo) {
	r.update(func(s *panelState) {
		s.runID, s.max, s.started = run.RunID, run.MaxIter, r.now()
	})
	r.screen.show()
	r.text.LoopStarted(run)
}

func (r *Live) IterationStarted(it engine.IterationInfo) {
	r.update(func(s *panelState) {
		s.n, s.max, s.hat, s.backend, s.confirming = it.N, it.Max, it.Hat.ID, it.Backend, it.Confirming
		s.phase, s.phaseSince = phaseRunning, it.Started
		if s.phaseSince.IsZero() {
			s.phaseSince = r.now()
		}
		s.liveUsage, s.liveCost, s.liveTools = events.Usage{}, 0, events.ToolCounts{}
	})
	r.text.IterationStarted(it)
}

func (r *Live) Activity(it engine.IterationInfo, a events.Activity) {
	switch a.Kind {
	case events.ActivityUsage:
		// Usage activities are increments (see backends/jsonl.go); the
		// iteration's result replaces their sum when it finishes.
		r.update(func(s *panelState) {
			s.liveUsage = s.liveUsage.Add(a.Usage)
			s.liveCost += a.CostUSD
		})
		r.screen.redraw()
		return
	case events.ActivityTool:
		r.update(func(s *panelState) { s.liveTools.Count(a.Tool) })
	case events.ActivityText, events.ActivityRateLimit, events.ActivityError:
	}
	r.text.Activity(it, a)
}

func (r *Live) EventAccepted(ev events.Event, to []string, as string) {
	r.update(func(s *panelState) { s.lastEvent = routeText(ev.Topic, to, as) })
	r.text.EventAccepted(ev, to, as)
}

func (r *Live) EventRejected(ev events.Event, reason string) {
	code, _ := splitReason(reason)
	r.update(func(s *panelState) { s.lastEvent = ev.Topic + " rejected (" + code + ")" })
	r.text.EventRejected(ev, reason)
}

func (r *Live) IterationFinished(it engine.IterationInfo, res events.AgentResult) {
	r.update(func(s *panelState) {
		s.doneUsage = s.doneUsage.Add(res.Usage)
		s.doneCost += res.CostUSD
		s.doneTools = addTools(s.doneTools, res.Tools)
		s.liveUsage, s.liveCost, s.liveTools = events.Usage{}, 0, events.ToolCounts{}
		s.phase, s.phaseSince, s.lastOutcome = phaseBetween, r.now(), outcomeOf(it, res)
	})
	r.text.IterationFinished(it, res)
}

func addTools(a, b events.ToolCounts) events.ToolCounts {
	return events.ToolCounts{Read: a.Read + b.Read, Write: a.Write + b.Write, Shell: a.Shell + b.Shell, Other: a.Other + b.Other}
}

func (r *Live) Commit(it engine.IterationInfo, c engine.Commit) {
	r.update(func(s *panelState) { s.lastCommit = shortHash(c.Hash) + " " + c.Subject })
	r.text.Commit(it, c)
}

func (r *Live) RateLimited(it engine.IterationInfo, wait time.Duration) {
	r.update(func(s *panelState) {
		s.phase, s.phaseSince, s.waitUntil = phaseWaiting, r.now(), r.now().Add(wait)
	})
	r.text.RateLimited(it, wait)
}

// TaskComplete reports a SPEC.md checkbox that became checked.
func (r *Live) TaskComplete(index int, text string) {
	r.update(func(s *panelState) { s.lastEvent = fmt.Sprintf("task %d done: %s", index+1, text) })
	r.text.TaskComplete(index, text)
}

// Stuck reports that iterations stopped making progress.
func (r *Live) Stuck(reason string, withoutProgress int) {
	r.update(func(s *panelState) { s.lastEvent = "stuck: " + reason })
	r.text.Stuck(reason, withoutProgress)
}

func (r *Live) Warn(msg string) { r.text.Warn(msg) }

// LoopFinished takes the panel down for good before the summary, so the
// summary is the last thing on the screen and is not drawn over.
func (r *Live) LoopFinished(sum engine.Summary) {
	r.Close(nil)
	r.text.LoopFinished(sum)
}

// Phases of the panel's iteration line.
const (
	phaseStarting = ""        // before the first iteration
	phaseRunning  = "running" // an agent is running
	phaseBetween  = "between" // the agent exited; ralph decides what next
	phaseWaiting  = "waiting" // a rate limit: waiting to repeat the iteration
)

// panelState is everything the panel shows. Figures are split into the
// finished iterations ("done") and the one running ("live"), because the
// running agent's figures are replaced by its result when it ends.
type panelState struct {
	runID       string
	started     time.Time
	n, max      int
	hat         string
	backend     string
	confirming  bool
	phase       string
	phaseSince  time.Time
	waitUntil   time.Time
	lastOutcome string
	doneUsage   events.Usage
	doneCost    float64
	doneTools   events.ToolCounts
	liveUsage   events.Usage
	liveCost    float64
	liveTools   events.ToolCounts
	lastCommit  string
	lastEvent   string
}

// renderPanel draws the panel as lines of at most width-1 columns (the
// last column is left free so no terminal wraps a full line).
func renderPanel(s panelState, now time.Time, width int) []string {
	usage := s.doneUsage.Add(s.liveUsage)
	tools := addTools(s.doneTools, s.liveTools)
	lines := []string{
		panelHeader(s, now, width),
		" " + iterationLine(s, now),
		fmt.Sprintf(" cost $%.4f · tokens %s (%s in, %s out) · reads %d · writes %d · shell %d",
			s.doneCost+s.liveCost, humanCount(usage.Total()), humanCount(usage.InputTokens),
			humanCount(usage.OutputTokens), tools.Read, tools.Write, tools.Shell),
		" last commit  " + orDash(s.lastCommit),
		" last event   " + orDash(s.lastEvent),
	}
	for i, l := range lines {
		lines[i] = truncateCols(Sanitize(l), width-1)
	}
	return lines
}

func panelHeader(s panelState, now time.Time, width int) string {
	title := "── ralph "
	if s.runID != "" {
		title += "· run " + s.runID + " "
	}
	title += "· " + clockDuration(now.Sub(s.started)) + " "
	if fill := width - 1 - len([]rune(title)); fill > 0 {
		title += strings.Repeat("─", fill)
	}
	return title
}

func iterationLine(s panelState, now time.Time) string {
	if s.phase == phaseStarting {
		return fmt.Sprintf("iteration 0/%d · starting", s.max)
	}
	who := s.hat
	if s.confirming {
		who += ", confirming the completion claim"
	}
	line := fmt.Sprintf("iteration %d/%d · %s (%s) · ", s.n, s.max, who, s.backend)
	switch s.phase {
	case phaseRunning:
		return line + "working " + clockDuration(now.Sub(s.phaseSince))
	case phaseWaiting:
		return line + "rate limited, retrying in " + clockDuration(max(s.waitUntil.Sub(now), 0))
	}
	return line + s.lastOutcome + ", deciding what next"
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

// liveScreen keeps a panel at the bottom of a terminal: each Write (a whole
// line of text) erases the panel, prints the text where the panel was, and
// draws the panel again below it, in one write so the terminal never shows
// half a frame.
type liveScreen struct {
	mu    sync.Mutex
	w     io.Writer
	width func() int
	panel func(width int) []string
	shown int // panel lines on the screen now
	// visible is set once the run has started: before, the config is
	// loaded and the lock taken, and what prints then goes straight to
	// the terminal.
	visible bool
	gone    bool // the panel was removed for good
}

// show starts drawing the panel.
func (s *liveScreen) show() {
	s.mu.Lock()
	s.visible = true
	s.mu.Unlock()
	s.redraw()
}

// Write prints text above the panel.
func (s *liveScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf strings.Builder
	s.erase(&buf)
	buf.Write(p)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		buf.WriteByte('\n')
	}
	s.draw(&buf)
	if _, err := io.WriteString(s.w, buf.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redraw draws the panel again with fresh figures.
func (s *liveScreen) redraw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone || !s.visible {
		return
	}
	var buf strings.Builder
	s.erase(&buf)
	s.draw(&buf)
	_, _ = io.WriteString(s.w, buf.String())
}

// remove erases the panel and stops drawing it; text still passes through.
func (s *liveScreen) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf strings.Builder
	s.erase(&buf)
	s.gone = true
	_, _ = io.WriteString(s.w, buf.String())
}

// erase moves to the start of the panel's first line and clears to the end
// of the screen. The cursor rests at the end of the panel's last line (the
// panel ends without a newline, so it does not scroll the screen by one).
func (s *liveScreen) erase(buf *strings.Builder) {
	if s.shown == 0 {
		return
	}
	buf.WriteString("\r")
	if s.shown > 1 {
		fmt.Fprintf(buf, "\x1b[%dA", s.shown-1)
	}
	buf.WriteString("\x1b[J")
	s.shown = 0
}

func (s *liveScreen) draw(buf *strings.Builder) {
	if s.gone || !s.visible {
		return
	}
	lines := s.panel(s.width())
	for i, l := range lines {
		if i == 0 {
			l = "\x1b[1m" + l + "\x1b[0m" // the header line in bold
		} else {
			buf.WriteByte('\n')
		}
		buf.WriteString(l)
	}
	s.shown = len(lines)
}

var _ io.Writer = (*liveScreen)(nil)

package view

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"golang.org/x/term"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
)

// TerminalFd returns the file descriptor behind w when w is a terminal
// (a console on Windows); a pipe, a file or /dev/null is not one.
func TerminalFd(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return 0, false
	}
	return fd, true
}

// TerminalWidth is the terminal's width in columns, read anew each time so
// a resized window is drawn to its new size; 80 when it cannot be read.
func TerminalWidth(fd int) int {
	cols, _, err := term.GetSize(fd)
	if err != nil || cols <= 0 {
		return 80
	}
	return cols
}

// Live is the live view: the same lines as the plain reporter scroll
// by, and a status panel stays at the bottom of the terminal, redrawn in
// place when something changes and once a second for the clocks. The panel
// shows the model; the lines are a Text view written through the screen,
// which redraws the panel below each one.
type Live struct {
	*Text  // writes its lines through screen
	screen *liveScreen
	model  *Model
	now    func() time.Time

	stop     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

// NewLive starts the live view of m on w, a terminal whose width width
// reports; m must be fed the same reports first (see Tee). Close must be
// called to stop its clock and remove the panel.
func NewLive(w io.Writer, width func() int, m *Model, now func() time.Time, opts Options) *Live {
	r := &Live{model: m, now: now, stop: make(chan struct{}), stopped: make(chan struct{})}
	r.screen = &liveScreen{w: w, width: width, panel: r.panel}
	r.Text = NewText(r.screen, m, now, opts)
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

// panel renders the model for the screen, as `ralph watch` renders a
// run's header.
func (r *Live) panel(width int) []string {
	return RunPanel(r.model.Run(), r.now(), width)
}

func (r *Live) LoopStarted(run engine.RunInfo) {
	r.screen.show()
	r.Text.LoopStarted(run)
}

func (r *Live) Activity(it engine.IterationInfo, a events.Activity) {
	if a.Kind == events.ActivityUsage {
		r.screen.redraw() // fresh figures, no line
		return
	}
	r.Text.Activity(it, a)
}

// LoopFinished takes the panel down for good before the summary, so the
// summary is the last thing on the screen and is not drawn over.
func (r *Live) LoopFinished(sum engine.Summary) {
	r.Close(nil)
	r.Text.LoopFinished(sum)
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
		buf.WriteString(ansi.CursorUp(s.shown - 1))
	}
	buf.WriteString(ansi.EraseScreenBelow)
	s.shown = 0
}

func (s *liveScreen) draw(buf *strings.Builder) {
	if s.gone || !s.visible {
		return
	}
	lines := s.panel(s.width())
	// The panel's lines are Lip Gloss's (RunPanel). Keeping them at the
	// bottom while whole lines scroll above stays here, with the sequences
	// of charmbracelet/x/ansi: an inline Bubble Tea program would print
	// the lines (tea.Println) later, from its own loop, where `ralph loop`
	// writes each line, the log's included, at once and in order, and
	// takes the panel down before the summary.
	buf.WriteString(strings.Join(lines, "\n"))
	s.shown = len(lines)
}

var _ io.Writer = (*liveScreen)(nil)

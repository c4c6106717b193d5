package watch

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// Options are what `ralph watch` was asked.
type Options struct {
	Dir  string // the workspace
	Task string // the slot to select first: a task id or slot; "" for the first
	Now  func() time.Time
	// Loc is the time zone of the events' times; nil is the local one.
	Loc *time.Location
	// Term is $TERM: "dumb" (or none) gets plain lines.
	Term string
	// Once ends the plain lines with the run they show, rather than wait
	// for the next run and follow it too.
	Once bool
	// Redactor hides secret values in the logs' lines shown; nil hides
	// nothing.
	Redactor *redact.Redactor
}

// withDefaults fills in the clock and the time zone when not given.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Loc == nil {
		o.Loc = time.Local
	}
	return o
}

// model is the Bubble Tea model: what was last read of the workspace, and
// what the person looks at in it.
type model struct {
	opts   Options
	reader *view.WorkspaceReader
	files  *fileWatch
	graphs api.Graphs
	w      view.Watched

	width, height int
	task          string // the selected slot's task
	// cursor is the selected event's offset in the selected loop's log,
	// followed to the newest while follow is on.
	cursor  int64
	follow  bool
	payload *view.EventLine // the event whose payload is open
	pane    *textPane       // an iteration opened (iteration.go)
	scroll  int             // the payload's first line shown
	// help draws the footer's keys, and all of them full-screen while
	// its ShowAll is on.
	help        help.Model
	confirmStop bool // a stop waiting for its key to be pressed again
	// answer is the answer being typed to the selected loop's question,
	// nil when none is.
	answer *answerInput
	// guide is guidance being typed to the selected loop, nil when none is.
	guide  *guideInput
	notice string // one line for the person: what a key did, or why not
	// reading says a read of the workspace is under way, in its own
	// goroutine: one at a time, so that a slow disk does not pile them
	// up; stale says something changed since it began, to read again.
	reading, stale bool
}

func newModel(opts Options, files *fileWatch) *model {
	opts = opts.withDefaults()
	m := &model{opts: opts, reader: view.NewWorkspaceReader(opts.Dir, opts.Redactor), files: files, graphs: api.Graphs{},
		width: 80, height: 24, task: opts.Task, follow: true, help: newHelp()}
	// The first screen shows the workspace, not an empty frame: this read
	// is before the program starts; every later one is a command's.
	m.show(readWorkspace(m.reader, files, opts.Dir, m.task))
	return m
}

// Messages: the clock's tick, a change to a watched file, and what a read
// of the workspace for the slot of task found.
type (
	tickMsg    time.Time
	changedMsg struct{}
	readMsg    struct {
		task string
		w    view.Watched
	}
)

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(tick(), m.files.next())
}

// read is the command that reads the workspace again for the selected
// slot, or nil when a read is already under way (which then reads again
// once it is done).
func (m *model) read() tea.Cmd {
	if m.reading {
		m.stale = true
		return nil
	}
	m.reading = true
	reader, files, dir, task := m.reader, m.files, m.opts.Dir, m.task
	return func() tea.Msg {
		return readMsg{task: task, w: readWorkspace(reader, files, dir, task)}
	}
}

// readWorkspace reads the workspace for the slot of task, and watches the
// directories of what it read.
func readWorkspace(r *view.WorkspaceReader, files *fileWatch, dir, task string) view.Watched {
	w := r.Read(task)
	files.add(append(w.Paths(), dir))
	return w
}

// done takes what a read found, unless the selection moved meanwhile, and
// reads again if anything changed since it began.
func (m *model) done(msg readMsg) tea.Cmd {
	m.reading = false
	if msg.task == m.task {
		m.show(msg.w)
	} else {
		m.stale = true
	}
	if m.stale {
		m.stale = false
		return m.read()
	}
	return nil
}

// show is w on the screen, keeping the selection.
func (m *model) show(w view.Watched) {
	m.w = w
	if m.w.Selected >= 0 {
		m.task = m.w.Slots[m.w.Selected].Task
	}
	if m.follow {
		m.cursor = m.lastOffset()
	}
}

func (m *model) lastOffset() int64 {
	if m.w.Loop == nil || len(m.w.Loop.Events) == 0 {
		return -1
	}
	return m.w.Loop.Events[len(m.w.Loop.Events)-1].Offset
}

// selectedEvent is the index of the cursor's event in the loop's events.
func (m *model) selectedEvent() int {
	if m.w.Loop == nil {
		return -1
	}
	evs := m.w.Loop.Events
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Offset <= m.cursor {
			return i
		}
	}
	if len(evs) > 0 {
		return 0
	}
	return -1
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width - 1)
	case tickMsg:
		return m, tea.Batch(m.read(), tick())
	case changedMsg:
		return m, tea.Batch(m.read(), m.files.next())
	case readMsg:
		return m, m.done(msg)
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// key acts on a key press.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if key.Matches(k, keys.ForceQuit) {
		return tea.Quit
	}
	if m.answer != nil {
		return m.answerKey(k)
	}
	if m.guide != nil {
		return m.guideKey(k)
	}
	if m.confirmStop {
		m.confirmStop = false
		if key.Matches(k, keys.Stop) {
			m.notice = m.stop()
		} else {
			m.notice = "not stopped"
		}
		return nil
	}
	m.notice = ""
	switch {
	case m.help.ShowAll:
		m.help.ShowAll = false
		return nil
	case m.payload != nil, m.pane != nil:
		return m.payloadKey(k)
	}
	switch {
	case key.Matches(k, keys.Quit):
		return tea.Quit
	case key.Matches(k, keys.Help):
		m.help.ShowAll = true
	case key.Matches(k, keys.NextSlot):
		return m.moveSlot(1)
	case key.Matches(k, keys.PrevSlot):
		return m.moveSlot(-1)
	case key.Matches(k, keys.Up):
		m.moveEvent(-1)
	case key.Matches(k, keys.Down):
		m.moveEvent(1)
	case key.Matches(k, keys.PageUp):
		m.moveEvent(-10)
	case key.Matches(k, keys.PageDown):
		m.moveEvent(10)
	case key.Matches(k, keys.First):
		m.follow = false
		if m.w.Loop != nil && len(m.w.Loop.Events) > 0 {
			m.cursor = m.w.Loop.Events[0].Offset
		}
	case key.Matches(k, keys.Newest):
		m.follow, m.cursor = true, m.lastOffset()
	case key.Matches(k, keys.Follow):
		m.toggleFollow()
	case key.Matches(k, keys.Open):
		if i := m.selectedEvent(); i >= 0 && opensIteration(m.w.Loop.Events[i]) {
			m.openIteration()
		} else if i >= 0 {
			ev := m.w.Loop.Events[i]
			m.payload, m.scroll = &ev, 0
		}
	case key.Matches(k, keys.Inspect):
		m.openIteration()
	case key.Matches(k, keys.Pause):
		m.notice = m.pauseOrResume()
	case key.Matches(k, keys.Stop):
		m.confirmStop = true
	case key.Matches(k, keys.Answer):
		m.startAnswer()
	case key.Matches(k, keys.Guide):
		m.startGuide()
	}
	return nil
}

func (m *model) toggleFollow() {
	m.follow = !m.follow
	if m.follow {
		m.cursor = m.lastOffset()
		m.notice = "following the newest event"
	} else {
		m.notice = "stopped following: ↑/↓ move, f follows again"
	}
}

// payloadKey scrolls the open payload or iteration; a key it does not
// scroll with closes it.
func (m *model) payloadKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, keys.Up):
		m.scroll = max(m.scroll-1, 0)
	case key.Matches(k, keys.Down):
		m.scroll++
	case key.Matches(k, keys.PageUp):
		m.scroll = max(m.scroll-10, 0)
	case key.Matches(k, keys.ScrollPage):
		m.scroll += 10
	case key.Matches(k, keys.Quit):
		return tea.Quit
	default:
		m.payload, m.pane = nil, nil
	}
	return nil
}

// moveSlot selects another slot, and reads its loop.
func (m *model) moveSlot(by int) tea.Cmd {
	n := len(m.w.Slots)
	if n == 0 {
		m.notice = "no slot to move to: " + m.what() + " has no other loop"
		return nil
	}
	i := (m.w.Selected + by + n) % n
	m.task = m.w.Slots[i].Task
	m.follow, m.payload, m.pane = true, nil, nil
	return m.read()
}

func (m *model) moveEvent(by int) {
	if m.w.Loop == nil || len(m.w.Loop.Events) == 0 {
		return
	}
	evs := m.w.Loop.Events
	i := min(max(m.selectedEvent()+by, 0), len(evs)-1)
	m.cursor = evs[i].Offset
	m.follow = i == len(evs)-1 && by > 0
}

// what names what is watched, for messages.
func (m *model) what() string {
	if m.w.Autopilot != nil {
		return "the autopilot"
	}
	return "this loop"
}

// pauseOrResume asks the autopilot to pause, or to resume when paused,
// through the same control files as `ralph autopilot pause|resume`.
func (m *model) pauseOrResume() string {
	ap := m.w.Autopilot
	switch {
	case ap == nil && m.w.Loop != nil && m.w.Loop.Chain != nil:
		return "a chain cannot pause: s stops it at this step (ralph chain resume goes on)"
	case ap == nil:
		return "a lone loop cannot pause: s stops it (ralph loop --resume goes on)"
	case !ap.Running:
		return "the autopilot is not running: nothing to pause or resume"
	case ap.Paused:
		return m.request(runfiles.ControlResume)
	}
	return m.request(runfiles.ControlPause)
}

// stop asks what runs here to stop gently, as `ralph autopilot stop` or
// `ralph stop` would, and says what was asked.
func (m *model) stop() string {
	switch {
	case m.w.Autopilot != nil && !m.w.Autopilot.Running:
		return "the autopilot is not running: nothing to stop"
	case m.w.Autopilot != nil:
		return m.request(runfiles.ControlStop)
	case m.w.Loop == nil || !m.w.Loop.Running:
		return "no loop runs here to stop"
	}
	files := runfiles.In(m.opts.Dir)
	if l := m.w.Loop; l != nil && l.Chain != nil {
		files = l.Files // a chain's step: stopping it stops the chain there
	}
	if err := runfiles.RequestStopIn(files, runfiles.StopAtBoundary); err != nil {
		return fmt.Sprintf("could not ask: %v", err)
	}
	return "asked the loop to stop before its next iteration"
}

// request writes an autopilot's control request and says what was asked.
func (m *model) request(req runfiles.ControlRequest) string {
	if err := runfiles.RequestControl(m.opts.Dir, req); err != nil {
		return fmt.Sprintf("could not ask: %v", err)
	}
	switch req {
	case runfiles.ControlPause:
		return "asked the autopilot to pause: no new task starts"
	case runfiles.ControlResume:
		return "asked the autopilot to resume"
	case runfiles.ControlStop:
		return "asked the autopilot to stop: running loops finish, no task starts"
	case runfiles.ControlStopNow:
	}
	return "asked the autopilot to stop now: running loops are interrupted"
}

// joinWords is the non-empty words joined by " · ".
func joinWords(words ...string) string {
	var out []string
	for _, w := range words {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " · ")
}

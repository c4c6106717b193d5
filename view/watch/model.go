package watch

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/redact"
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
	scroll  int             // the payload's first line shown
	help    bool
	confirm string // a request waiting for its key to be pressed again
	// answer is the answer being typed to the selected loop's question,
	// nil when none is.
	answer *answerInput
	notice string // one line for the person: what a key did, or why not
}

func newModel(opts Options, files *fileWatch) *model {
	opts = opts.withDefaults()
	m := &model{opts: opts, reader: view.NewWorkspaceReader(opts.Dir, opts.Redactor), files: files, graphs: api.Graphs{},
		width: 80, height: 24, task: opts.Task, follow: true}
	m.refresh()
	return m
}

// Messages: the clock's tick, and a change to a watched file.
type (
	tickMsg    time.Time
	changedMsg struct{}
)

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(tick(), m.files.next())
}

// refresh reads the workspace again, keeping the selection.
func (m *model) refresh() {
	m.w = m.reader.Read(m.task)
	if m.w.Selected >= 0 {
		m.task = m.w.Slots[m.w.Selected].Task
	}
	if m.files != nil {
		m.files.add(append(m.w.Paths(), m.opts.Dir))
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
	case tickMsg:
		m.refresh()
		return m, tick()
	case changedMsg:
		m.refresh()
		return m, m.files.next()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// key acts on a key press.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	key := k.String()
	if key == "ctrl+c" {
		return tea.Quit
	}
	if m.answer != nil {
		m.answerKey(k)
		return nil
	}
	if confirm := m.confirm; confirm != "" {
		m.confirm = ""
		if key == "s" {
			m.notice = m.request(confirm)
		} else {
			m.notice = "not stopped"
		}
		return nil
	}
	m.notice = ""
	switch {
	case m.help:
		m.help = false
		return nil
	case m.payload != nil:
		return m.payloadKey(key)
	}
	switch key {
	case "q":
		return tea.Quit
	case "?":
		m.help = true
	case "tab", "]", "right", "l":
		m.moveSlot(1)
	case "shift+tab", "[", "left", "h":
		m.moveSlot(-1)
	case "up", "k":
		m.moveEvent(-1)
	case "down", "j":
		m.moveEvent(1)
	case "pgup":
		m.moveEvent(-10)
	case "pgdown":
		m.moveEvent(10)
	case "home", "g":
		m.follow = false
		if m.w.Loop != nil && len(m.w.Loop.Events) > 0 {
			m.cursor = m.w.Loop.Events[0].Offset
		}
	case "end", "G":
		m.follow, m.cursor = true, m.lastOffset()
	case "f":
		m.follow = !m.follow
		if m.follow {
			m.cursor = m.lastOffset()
			m.notice = "following the newest event"
		} else {
			m.notice = "stopped following: ↑/↓ move, f follows again"
		}
	case "enter":
		if i := m.selectedEvent(); i >= 0 {
			ev := m.w.Loop.Events[i]
			m.payload, m.scroll = &ev, 0
		}
	case "p":
		m.notice = m.pauseOrResume()
	case "s":
		m.confirm = "stop"
	case "a":
		m.startAnswer()
	}
	return nil
}

func (m *model) payloadKey(key string) tea.Cmd {
	switch key {
	case "up", "k":
		m.scroll = max(m.scroll-1, 0)
	case "down", "j":
		m.scroll++
	case "pgup":
		m.scroll = max(m.scroll-10, 0)
	case "pgdown", "space":
		m.scroll += 10
	case "q":
		return tea.Quit
	default:
		m.payload = nil
	}
	return nil
}

func (m *model) moveSlot(by int) {
	n := len(m.w.Slots)
	if n == 0 {
		m.notice = "no slot to move to: " + m.what() + " has no other loop"
		return
	}
	i := (m.w.Selected + by + n) % n
	m.task = m.w.Slots[i].Task
	m.follow, m.payload = true, nil
	m.refresh()
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
	case ap == nil:
		return "a lone loop cannot pause: s stops it (ralph loop --resume goes on)"
	case !ap.Running:
		return "the autopilot is not running: nothing to pause or resume"
	case ap.Paused:
		return m.request(autopilot.RequestResume)
	}
	return m.request(autopilot.RequestPause)
}

// request writes a control request and says what was asked.
func (m *model) request(req string) string {
	var err error
	var done string
	switch {
	case req == "stop" && m.w.Autopilot != nil && !m.w.Autopilot.Running:
		return "the autopilot is not running: nothing to stop"
	case req == "stop" && m.w.Autopilot == nil && (m.w.Loop == nil || !m.w.Loop.Running):
		return "no loop runs here to stop"
	case req == "stop" && m.w.Autopilot != nil:
		err = autopilot.Request(m.opts.Dir, autopilot.RequestStop)
		done = "asked the autopilot to stop: running loops finish, no task starts"
	case req == "stop":
		err = engine.RequestStop(m.opts.Dir, engine.StopAtBoundary)
		done = "asked the loop to stop before its next iteration"
	case req == autopilot.RequestPause:
		err = autopilot.Request(m.opts.Dir, req)
		done = "asked the autopilot to pause: no new task starts"
	case req == autopilot.RequestResume:
		err = autopilot.Request(m.opts.Dir, req)
		done = "asked the autopilot to resume"
	}
	if err != nil {
		return fmt.Sprintf("could not ask: %v", err)
	}
	return done
}

// helpText is what ? shows.
const helpText = `keys
  tab ] →  next slot           shift+tab [ ←  previous slot
  ↑ ↓ k j  select an event     pgup pgdown    by ten
  enter    open the event's payload (esc closes it)
  f        follow the newest event, or stop following
  p        pause or resume the autopilot (a lone loop has stop only)
  a        answer the question the loop waits on (enter sends it)
  s s      stop: the autopilot finishes its running loops and starts no
           task; a loop stops before its next iteration (press s twice)
  ?        this help           q              quit (the run goes on)

ralph watch only reads ralph's files: quitting, or several watchers,
change nothing; p and s write the same requests as ralph autopilot
pause|resume|stop and ralph stop.`

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

package watch

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// keyMap is every key of the screen, each with the words the footer and
// the help show for it: a key's action and its help cannot drift apart.
type keyMap struct {
	NextSlot, PrevSlot key.Binding
	Up, Down           key.Binding
	PageUp, PageDown   key.Binding
	First, Newest      key.Binding
	Open, Close        key.Binding
	Inspect            key.Binding
	Follow             key.Binding
	Pause, Stop        key.Binding
	Answer             key.Binding
	Guide              key.Binding
	Help, Quit         key.Binding
	// ForceQuit quits whatever is open, an answer being typed too.
	ForceQuit key.Binding
	// ScrollPage scrolls an open payload by ten lines.
	ScrollPage key.Binding
}

var keys = keyMap{
	NextSlot:   key.NewBinding(key.WithKeys("tab", "]", "right", "l"), key.WithHelp("tab ] →", "next slot")),
	PrevSlot:   key.NewBinding(key.WithKeys("shift+tab", "[", "left", "h"), key.WithHelp("shift+tab [ ←", "previous slot")),
	Up:         key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑ k", "the event before")),
	Down:       key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓ j", "the event after")),
	PageUp:     key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "ten events before")),
	PageDown:   key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdown", "ten events after")),
	First:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "the first event")),
	Newest:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end G", "the newest event, followed")),
	Open:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open the event's payload, or on iteration.started the iteration's prompt, output and diff (esc closes it)")),
	Inspect:    key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "open the event's iteration: its prompt, output and diff (ralph inspect)")),
	Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
	Follow:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow the newest event, or stop following")),
	Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause or resume the autopilot (a lone loop has stop only)")),
	Answer:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "answer the question the loop waits on (enter sends it)")),
	Guide:      key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "guide the loop: its next iteration's prompt carries what you type")),
	Stop:       key.NewBinding(key.WithKeys("s"), key.WithHelp("s s", "stop (press s twice): the autopilot starts no task")),
	Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "this help")),
	Quit:       key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit (the run goes on)")),
	ForceQuit:  key.NewBinding(key.WithKeys("ctrl+c")),
	ScrollPage: key.NewBinding(key.WithKeys("pgdown", "space"), key.WithHelp("pgdown space", "by ten lines")),
}

// short are the footer's keys: an autopilot's, or a lone loop's, which
// has one slot and no pause. The autopilot's leave g to the help: they
// fill 80 columns.
func (k keyMap) short(autopilot bool) []key.Binding {
	if !autopilot {
		return []key.Binding{k.help(k.Down, "↑↓", "event"), k.help(k.Open, "enter", "payload"), k.help(k.Follow, "f", "follow"),
			k.help(k.Guide, "g", "guide"), k.help(k.Stop, "s", "stop"), k.help(k.Help, "?", "help"), k.help(k.Quit, "q", "quit")}
	}
	return []key.Binding{k.help(k.NextSlot, "tab", "slot"), k.help(k.Down, "↑↓", "event"), k.help(k.Open, "enter", "open"),
		k.help(k.Follow, "f", "follow"), k.help(k.Pause, "p", "pause"), k.help(k.Stop, "s", "stop"), k.help(k.Help, "?", ""),
		k.help(k.Quit, "q", "quit")}
}

// payload are an open payload's footer keys.
func (k keyMap) payload() []key.Binding {
	return []key.Binding{k.help(k.Up, "↑/↓", "scroll"), k.help(k.Close, "esc", "close"), k.help(k.Quit, "q", "quit")}
}

// help is b with the footer's shorter words.
func (keyMap) help(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// all are the help's keys, in one column.
func (k keyMap) all() [][]key.Binding {
	return [][]key.Binding{{k.NextSlot, k.PrevSlot, k.Up, k.Down, k.PageUp, k.PageDown, k.First, k.Newest, k.Open,
		k.Inspect, k.Follow, k.Pause, k.Answer, k.Guide, k.Stop, k.Help, k.Quit}}
}

// newHelp is a help that draws plain text: the screen's styles are the
// caller's.
func newHelp() help.Model {
	return help.Model{ShortSeparator: " · ", FullSeparator: "  ", Ellipsis: "…"}
}

// helpAfter is what the help says after the keys.
const helpAfter = `ralph watch only reads ralph's files: quitting, or several watchers,
change nothing; p and s write the same requests as ralph autopilot
pause|resume|stop and ralph stop, a and g the same events as ralph
answer and ralph guide. s stops an autopilot's run once its
running loops finish, a loop's before its next iteration.`

// helpLines are what ? shows.
func helpLines(h help.Model) []string {
	lines := []string{"keys"}
	for _, l := range strings.Split(h.FullHelpView(keys.all()), "\n") {
		lines = append(lines, "  "+strings.TrimRight(l, " "))
	}
	return append(append(lines, ""), strings.Split(helpAfter, "\n")...)
}

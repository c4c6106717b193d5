package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// textPane is a text opened full-screen over the events: an iteration's
// prompt, output and diff (what `ralph inspect` shows).
type textPane struct {
	title string
	body  string
}

// inspectTimeout bounds reading an iteration: its diff runs git, and the
// screen waits for it.
const inspectTimeout = 10 * time.Second

// openIteration opens the iteration of the selected event: its prompt,
// output and diff, read from the loop's files as `ralph inspect` reads
// them.
func (m *model) openIteration() {
	i := m.selectedEvent()
	if i < 0 {
		m.notice = "no event selected: ↑/↓ pick one"
		return
	}
	n, _ := api.EventIteration(m.w.Loop.Events[i].Event)
	switch {
	case n == 0:
		m.notice = "this event belongs to no iteration"
		return
	case m.w.Loop.Workspace == "":
		m.notice = "this loop runs on " + m.w.Loop.Worker + ": its prompts and diffs are there (ralph inspect on that host)"
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), inspectTimeout)
	defer cancel()
	text, err := inspectText(ctx, m.w.Loop.Workspace, m.w.Loop.Run.ID, n, m)
	if err != nil {
		m.notice = "cannot show iteration " + fmt.Sprint(n) + ": " + err.Error()
		return
	}
	m.pane, m.scroll = &textPane{title: fmt.Sprintf("iteration %d · prompt, output, diff · esc closes", n), body: text}, 0
}

func inspectText(ctx context.Context, workspace, runID string, n int, m *model) (string, error) {
	run, err := api.InspectRun(ctx, workspace, runID, m.opts.Redactor)
	if err != nil {
		return "", err
	}
	v, err := run.View(ctx, n, m.opts.Redactor)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = v.WriteText(&b)
	return b.String(), err
}

// opensIteration says enter on e opens its iteration rather than its
// payload: it is ralph's iteration.started line, whose payload says little
// more than the hat, while iteration.finished's (outcome, tokens, cost) is
// worth opening as it is; i opens any event's iteration.
func opensIteration(e view.EventLine) bool {
	_, started := api.EventIteration(e.Event)
	return started
}

package watch

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ralph-loop/ralph/view/api"
)

// guideInput is guidance being typed to the selected loop.
type guideInput struct {
	workspace string
	text      []rune
}

// startGuide begins guidance to the selected loop, as `ralph guide` sends.
func (m *model) startGuide() {
	l := m.w.Loop
	switch {
	case l == nil:
		m.notice = "no loop to guide"
	case l.Workspace == "":
		m.notice = "this loop runs on worker " + l.Worker + ": guide it there, with ralph guide"
	default:
		m.guide = &guideInput{workspace: l.Workspace}
	}
}

// guideKey edits the guidance: enter sends it, esc drops it.
func (m *model) guideKey(k tea.KeyPressMsg) tea.Cmd {
	g := m.guide
	switch k.String() {
	case "enter":
		text := string(g.text)
		if strings.TrimSpace(text) == "" {
			return nil
		}
		m.guide = nil
		said, err := api.Guide(g.workspace, "", text)
		if err != nil {
			m.notice = "not sent: " + err.Error()
			return nil
		}
		m.notice = said
		return m.read()
	case "esc":
		m.guide, m.notice = nil, "no guidance sent"
	case "backspace":
		if n := len(g.text); n > 0 {
			g.text = g.text[:n-1]
		}
	case "ctrl+u":
		g.text = nil
	default:
		g.text = append(g.text, []rune(k.Text)...)
	}
	return nil
}

// lines show the guidance being typed.
func (g *guideInput) lines(width int) []string {
	return []string{rule("guidance for the next iteration", width), " guidance: " + string(g.text) + "█"}
}

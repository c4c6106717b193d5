package watch

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/ralph-loop/ralph/runfiles"
)

// answerInput is an answer being typed to a question.
type answerInput struct {
	workspace string
	question  runfiles.Question
	text      textLine
}

// startAnswer begins an answer to the selected loop's pending question.
func (m *model) startAnswer() {
	l := m.w.Loop
	switch {
	case l == nil || l.Run.Question == nil:
		m.notice = "no question waits for an answer"
	case l.Workspace == "":
		m.notice = "this loop runs on worker " + l.Worker + ": answer it there, with ralph answer"
	default:
		m.answer = &answerInput{workspace: l.Workspace, question: *l.Run.Question}
	}
}

// answerKey edits the answer: enter sends it (a number alone picks that
// option), esc drops it.
func (m *model) answerKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.answer
	switch k.String() {
	case "enter":
		text := a.answerText(string(a.text))
		if strings.TrimSpace(text) == "" {
			return nil
		}
		m.answer = nil
		if err := runfiles.Answer(a.workspace, a.question.ID, text, "watch"); err != nil {
			m.notice = "not answered: " + err.Error()
			return nil
		}
		m.notice = "answered " + a.question.ID + ": " + text
		return m.read()
	case "esc":
		m.answer, m.notice = nil, "not answered"
	default:
		a.text.edit(k)
	}
	return nil
}

// answerText is what typed sends: the option it numbers, or itself.
func (a *answerInput) answerText(typed string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(typed)); err == nil && n >= 1 && n <= len(a.question.Options) {
		return a.question.Options[n-1]
	}
	return typed
}

// lines show the question and the answer being typed.
func (a *answerInput) lines(width int) []string {
	out := []string{rule("question "+a.question.ID+" from "+a.question.Hat, width), " " + a.question.Text}
	for i, o := range a.question.Options {
		out = append(out, "   "+strconv.Itoa(i+1)+") "+o)
	}
	return append(out, " answer: "+string(a.text)+"█")
}

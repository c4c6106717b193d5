package watch

import tea "charm.land/bubbletea/v2"

// textLine is a line being typed into one of the view's boxes (an answer,
// guidance): the editing keys they share.
type textLine []rune

// edit applies an editing key: backspace, ctrl+u (clear), or text.
func (t *textLine) edit(k tea.KeyPressMsg) {
	switch k.String() {
	case "backspace":
		if n := len(*t); n > 0 {
			*t = (*t)[:n-1]
		}
	case "ctrl+u":
		*t = nil
	default:
		*t = append(*t, []rune(k.Text)...)
	}
}

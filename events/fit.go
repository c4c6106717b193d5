package events

import (
	"fmt"
	"unicode/utf8"
)

// FitPayload returns ev as it can be written: unchanged when its line is at
// most MaxLineBytes long, else with its payload cut to fit. The cut payload
// is a text: the beginning and the end of what the payload said (a text
// payload's words, another payload's JSON) around a note of how many bytes
// were left out. cut is that number, 0 when nothing was cut. [Log.Append]
// fits every event it writes; a caller that wants to say so (`ralph emit`)
// fits the event first.
func FitPayload(ev Event) (fitted Event, cut int, err error) {
	line, err := EncodeLine(ev)
	if err != nil {
		return ev, 0, err
	}
	if len(line) <= MaxLineBytes {
		return ev, 0, nil
	}
	return fitPayload(ev, len(line))
}

// fitPayload cuts ev's payload, whose line is size bytes, until the line
// fits. JSON escapes make a text longer in the line than it is, by up to six
// times for control characters, so the text kept shrinks with what the last
// try came to until the line fits.
func fitPayload(ev Event, size int) (Event, int, error) {
	text := ev.PayloadText()
	if !isStringPayload(ev) {
		text = string(ev.Payload) // its JSON, as it is in the line
	}
	rest := size - len(ev.Payload) // the line without the payload
	keep := MaxLineBytes - rest - cutNoteRoom
	for keep > 0 {
		cutText, cut := headAndTail(text, keep)
		fitted := ev
		fitted.Payload = StringPayload(cutText)
		line, err := EncodeLine(fitted)
		if err != nil {
			return ev, 0, err
		}
		if len(line) <= MaxLineBytes {
			return fitted, cut, nil
		}
		keep = int(int64(keep) * int64(MaxLineBytes-rest-cutNoteRoom) / int64(len(line)-rest))
	}
	return ev, 0, fmt.Errorf("event %q: its fields leave no room for a payload in the %d bytes of an event line", ev.Topic, MaxLineBytes)
}

// cutNoteRoom is room for the note headAndTail puts between the two ends.
const cutNoteRoom = 160

// isStringPayload says the payload is a JSON string.
func isStringPayload(ev Event) bool {
	for _, c := range ev.Payload {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			return true
		}
		return false
	}
	return false
}

// headAndTail keeps about keep bytes of s, half from its beginning and half
// from its end (cut at rune boundaries), around a note of how many bytes
// were left out; s itself when it is no longer than keep.
func headAndTail(s string, keep int) (string, int) {
	if len(s) <= keep {
		return s, 0
	}
	head := s[:runeStart(s, keep/2)]
	start := len(s) - (keep - len(head))
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	tail := s[start:]
	cut := len(s) - len(head) - len(tail)
	return head + CutNote(int64(cut)) + tail, cut
}

// CutNote is the note that stands, on a line of its own, for the n bytes
// left out of a payload too long for an event line.
func CutNote(n int64) string {
	return fmt.Sprintf("\n[… %d bytes cut by ralph: an event line holds at most %d bytes …]\n", n, MaxLineBytes)
}

// runeStart is the largest i <= n at which a rune of s starts.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

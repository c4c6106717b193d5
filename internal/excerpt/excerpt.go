// Package excerpt shortens a text too long to pass on whole to its
// beginning and its end, for a reader who is then told how much was left
// out and where the whole is: a long event payload or objective in an
// agent's prompt, a prompt too long for a command-line argument. Both ends
// are kept because a text says what it is about at the start and how it
// ended at the end (a test log's failures, a prompt's instructions on how
// to hand off).
//
// It is a leaf that imports nothing of ralph's.
package excerpt

import (
	"strings"
	"unicode/utf8"
)

// Cut returns s as head, with tail empty and omitted 0, when s is at most
// limit bytes. Otherwise head and tail are about limit/2 bytes each from
// either end of s, together at most limit bytes, and omitted is the number
// of bytes between them. Each is cut at a line break when one lies in the
// half of it nearer the cut, so no line is shown in part, and never inside a
// UTF-8 sequence.
func Cut(s string, limit int) (head, tail string, omitted int) {
	if len(s) <= limit {
		return s, "", 0
	}
	limit = max(limit, 0)
	head = s[:runeStart(s, limit/2)]
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	start := len(s) - (limit - limit/2)
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	tail = s[start:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	return head, tail, len(s) - len(head) - len(tail)
}

// runeStart is the largest i <= n at which a rune of s starts.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

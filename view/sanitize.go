package view

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sanitize makes text from an agent safe to print on one line. Escape
// sequences could recolour the terminal, move the cursor, retitle the window
// or corrupt the live view, and a log file should hold none: each is
// dropped whole, because dropping only its ESC leaves litter such as
// "[31m". Other control characters (carriage returns, bells) are dropped;
// tabs and newlines become spaces; bytes that are not UTF-8 become U+FFFD.
//
// Sequences follow ECMA-48, in their 7-bit (ESC [) and 8-bit (U+009B) forms:
// CSI (colours, cursor moves, private modes such as ESC [?25l), strings
// (OSC titles and hyperlinks, DCS, SOS, PM, APC) up to BEL or ST, and the
// short escapes (ESC 7, ESC (B). A string left unterminated ends at the end
// of its line, so that a stray ESC ] does not hide the rest of the text.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\t' || r == '\n':
			b.WriteByte(' ')
		case r == esc:
			i = skipEscape(s, i+size)
			continue
		case r == c1CSI:
			i = skipCSI(s, i+size)
			continue
		case isC1String(r):
			i = skipString(s, i+size)
			continue
		case unicode.IsControl(r):
		default:
			b.WriteRune(r) // invalid UTF-8 becomes U+FFFD
		}
		i += size
	}
	return b.String()
}

// clean reports whether s can be printed as it is: valid UTF-8 (a stray
// byte such as 0x9b is CSI to a terminal that is not in UTF-8 mode) without
// control characters.
func clean(s string) bool {
	i := 0
	for i < len(s) && ' ' <= s[i] && s[i] < 0x7f {
		i++ // printable ASCII, the common case, without decoding runes
	}
	for _, c := range s[i:] {
		if unicode.IsControl(c) || c == utf8.RuneError {
			return false
		}
	}
	return true
}

// The characters that start or end sequences.
const (
	esc   = 0x1b
	bel   = 0x07
	can   = 0x18 // cancels a sequence in progress
	sub   = 0x1a // likewise
	c1CSI = '\u009b'
	c1ST  = '\u009c'
)

// isC1String reports whether r opens a control string in its 8-bit form:
// DCS, SOS, OSC, PM or APC.
func isC1String(r rune) bool {
	return r == '\u0090' || r == '\u0098' || r == '\u009d' || r == '\u009e' || r == '\u009f'
}

// skipEscape returns the index just past the escape sequence whose ESC
// ends at i. An ESC that starts no sequence is dropped alone.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case 0x20 <= c && c <= 0x2f: // intermediates, then a final byte: ESC ( B
		i = skipRange(s, i, 0x20, 0x2f)
		if i < len(s) && 0x30 <= s[i] && s[i] <= 0x7e {
			i++
		}
		return i
	case 0x30 <= c && c <= 0x7e: // a final byte alone: ESC 7, ESC =, ESC c
		return i + 1
	}
	return i
}

// skipCSI returns the index just past a control sequence whose introducer
// ends at i: parameter bytes, intermediate bytes and a final byte. A
// sequence broken off by any other byte ends before it.
func skipCSI(s string, i int) int {
	i = skipRange(s, i, 0x30, 0x3f)
	i = skipRange(s, i, 0x20, 0x2f)
	if i < len(s) && 0x40 <= s[i] && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString returns the index just past a control string whose opener
// ends at i: up to and including BEL or ST (ESC \ or U+009C), or CAN or SUB,
// which cancel it. Another ESC ends it and starts a sequence of its own; a
// newline ends an unterminated one and is kept.
func skipString(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == bel || r == can || r == sub || r == c1ST:
			return i + size
		case r == esc && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case r == esc || r == '\n':
			return i
		}
		i += size
	}
	return i
}

// skipRange returns the index of the first byte at or after i outside
// [lo, hi].
func skipRange(s string, i int, lo, hi byte) int {
	for i < len(s) && lo <= s[i] && s[i] <= hi {
		i++
	}
	return i
}

package view

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sanitizeCases are what agents print, or might, and what ralph shows.
var sanitizeCases = []struct {
	name, in, want string
}{
	{"plain text is kept", "tests: pass, ünïcode ✓", "tests: pass, ünïcode ✓"},
	{"tabs and newlines become spaces", "a\tb\nc", "a b c"},
	{"carriage return and bell are dropped", "50%\r100%\a", "50%100%"},
	{"colour", "\x1b[31mred\x1b[0m", "red"},
	{"CSI with several parameters", "\x1b[1;38;5;208mbold orange\x1b[m", "bold orange"},
	{"CSI without parameters", "\x1b[Kcleared", "cleared"},
	{"private mode: hide the cursor", "\x1b[?25lhidden\x1b[?25h", "hidden"},
	{"private mode: alternate screen", "\x1b[?1049hfull\x1b[?1049l", "full"},
	{"CSI with an intermediate byte", "\x1b[2 qblock cursor", "block cursor"},
	{"cursor movement", "a\x1b[2Ab\x1b[10;20Hc", "abc"},
	{"OSC window title ended by BEL", "\x1b]0;my title\atext", "text"},
	{"OSC window title ended by ST", "\x1b]2;my title\x1b\\text", "text"},
	{"OSC 8 hyperlink", "see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."},
	{"DCS string", "\x1bP1$r0m\x1b\\after", "after"},
	{"APC string", "\x1b_Gf=100;AAAA\x1b\\after", "after"},
	{"two-byte escapes", "\x1b7saved\x1b8 \x1b=keypad\x1b>", "saved keypad"},
	{"character set selection", "\x1b(Bascii\x1b)0", "ascii"},
	{"reset", "\x1bcfresh", "fresh"},
	{"8-bit CSI", "\u009b31mred\u009b0m", "red"},
	{"8-bit OSC ended by 8-bit ST", "\u009d0;title\u009ctext", "text"},
	{"ESC at the end", "text\x1b", "text"},
	{"CSI cut off at the end", "text\x1b[31", "text"},
	{"CSI broken by a control character", "a\x1b[3\nb", "a b"},
	{"OSC ended by CAN", "a\x1b]0;title\x18b", "ab"},
	{"unterminated OSC ends at the line's end", "a\x1b]0;title\nnext line", "a next line"},
	{"ESC inside an OSC starts a new sequence", "a\x1b]0;title\x1b[31mred", "ared"},
	{"ESC before a non-ASCII letter", "\x1bétat", "état"},
	{"DEL is dropped", "a\x7fb", "ab"},
	{"invalid UTF-8 next to a sequence", "\xff\x1b[0m", "\uFFFD"},
	{"invalid UTF-8 alone", "a\x9b31mb", "a\uFFFD31mb"},
}

func TestSanitize(t *testing.T) {
	for _, tt := range sanitizeCases {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Sanitize(tt.in))
		})
	}
}

// FuzzSanitize: whatever an agent prints, what ralph shows of it is UTF-8
// with no control character at all (no ESC, no C1 control, nothing that
// moves the cursor), and such text is shown as it is.
func FuzzSanitize(f *testing.F) {
	for _, tt := range sanitizeCases {
		f.Add(tt.in)
	}
	var every strings.Builder
	for c := rune(0); c < 0xa0; c++ {
		every.WriteString("x" + string(c) + "[1;2m]0;t")
	}
	f.Add(every.String())
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		require.True(t, utf8.ValidString(out), "%q is not UTF-8", out)
		for _, c := range out {
			require.False(t, c < 0x20 || (c >= 0x7f && c < 0xa0), "control character %U in %q", c, out)
		}
		if clean(s) {
			require.Equal(t, s, out)
		}
	})
}

package view

import (
	"bytes"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
)

// FuzzDecodedRow holds the table's row for a line whose fields were
// filled while it was decoded, by a printer that has printed the lines
// before, to the row a new printer prints of the same line decoded alone,
// whose payload it reads again: the same bytes, or the same error.
func FuzzDecodedRow(f *testing.F) {
	for i := range 2 * len(benchgen.Cycle) {
		f.Add([]byte(benchgen.Line(i)))
	}
	for _, s := range []string{
		`{"topic":"iteration.started","payload":{"iteration":2,"hat":"h","events":[1,2],"confirming":true,"backend":"b","topic":5},"source":"ralph"}`,
		`{"topic":"iteration.finished","payload":{"hat":"h","outcome":"failure","failure":"crash","message":"m","duration_ms":61000,"tokens":{"input_tokens":1500},"cost_usd":1e-5,"to":"x"},"source":"ralph"}`,
		`{"topic":"event.routed","payload":{"topic":"t","to":[],"as":"claim","events":"x"},"source":"ralph","hat":"own"}`,
		`{"topic":"event.routed","payload":{"topic":"t","to":["a","b"]},"payload":{"topic":"u"},"source":"ralph"}`,
		`{"topic":"event.routed","payload":{ "topic" : "t\u0041" },"source":"ralph"}`,
		`{"source":"ralph","payload":{"hat":"h"},"topic":"iteration.started"}`,
		`{"topic":"loop.started","payload":{"run_id":"r","objective":"o"},"source":"ralph"}`,
	} {
		f.Add([]byte(s))
	}
	// The filled printer lives across inputs, as a listing's does, with
	// whatever it caches; the other is new for each.
	loc := time.FixedZone("odd", -(3*3600 + 30*60 + 7))
	filledPrinter := &EventPrinter{Loc: loc}
	f.Fuzz(func(t *testing.T, line []byte) {
		// New decoders each time, so that what a run covers does not depend
		// on the strings the runs before it shared.
		var filledDec, aloneDec events.Decoder
		if bytes.IndexByte(line, '\n') >= 0 {
			t.Skip() // a log's line has none
		}
		ev, filled, err := filledPrinter.decode(&filledDec, line)
		want, wantErr := aloneDec.ParseLine(line)
		require.Equal(t, wantErr, err, "error for %q", line)
		if err != nil {
			return
		}
		got := string(filledPrinter.appendDecodedRow(nil, ev, filled))
		alonePrinter := &EventPrinter{Loc: loc}
		require.Equal(t, string(alonePrinter.appendRow(nil, want)), got, "row of %q (filled %v)", line, filled)
	})
}

// FuzzPlainCell holds plainCell, which takes eight bytes at a time, to the
// same test taken a byte at a time, and to what it stands for: Clip and
// Sanitize leave a plain cell as it is.
func FuzzPlainCell(f *testing.F) {
	for _, s := range []string{
		"", " ", "a", "builder success 1s 1.3k tok $0.0123", "tests: pass, lint: pass, run 5",
		"12345678 12345678", "1234567  abcdefgh", "abcdefg  bcdefgh", "abcdefgh ", " abcdefgh",
		"abcdefg\x7fabc", "abcdefgh\tabc", "héros à l'œuvre", "abcdefgh\xffabcdefgh", "abc\u2028defghij",
	} {
		f.Add([]byte(s), 100)
		f.Add([]byte(s), 8)
	}
	f.Fuzz(func(t *testing.T, s []byte, n int) {
		got := plainCell(s, n)
		require.Equal(t, plainCellBytewise(s, n), got, "%q, %d", s, n)
		if got && n > 0 {
			require.Equal(t, string(s), Clip(Sanitize(string(s)), n), "%q, %d", s, n)
		}
	})
}

// plainCellBytewise is plainCell a byte at a time, as it was.
func plainCellBytewise(s []byte, n int) bool {
	prev, runes := byte(' '), 0
	for i := 0; i < len(s); runes++ {
		c := s[i]
		if ' ' < c && c < 0x7f {
			prev = c
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if c != ' ' || prev == ' ' {
				return false
			}
			prev = c
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			return false
		}
		prev = 'x'
		i += size
	}
	return (prev != ' ' || len(s) == 0) && runes <= n
}

package criteria

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/internal/plural"
)

// tailBuffer keeps the last limit bytes written to it. It is written by one
// goroutine and read after that goroutine is done, so it needs no lock.
type tailBuffer struct {
	limit int
	buf   []byte
	total int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += len(p)
	t.buf = append(t.buf, p...)
	// Trimming only past twice the limit keeps the copying amortised. One
	// byte more than the limit is kept, to tell whether the tail starts a
	// line.
	if len(t.buf) > 2*t.limit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.limit-1:]...)
	}
	return len(p), nil
}

// String is the kept tail. When output was dropped it starts at a line (a
// cut line misleads more than a missing one) and says how much is missing.
func (t *tailBuffer) String() string {
	if len(t.buf) <= t.limit {
		return string(t.buf)
	}
	b := t.buf[len(t.buf)-t.limit:]
	if t.buf[len(t.buf)-t.limit-1] != '\n' {
		b = fromLineStart(b)
	}
	return fmt.Sprintf("[%s of output omitted]\n%s", plural.Count(t.total-len(b), "earlier byte", "earlier bytes"), b)
}

// fromLineStart drops the cut line at the start of b; when b is all one
// line, it keeps it and drops only a cut character.
func fromLineStart(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		return b[i+1:]
	}
	return trimPartialRune(b)
}

// trimPartialRune drops the continuation bytes of a character cut at the
// start of b.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// Package tail keeps the end of a stream in bounded memory: the last bytes
// an agent wrote on stderr, for its failure message, or the last output of
// a check command, as evidence. The end is kept because that is where
// programs say why they stopped.
//
// It is a leaf that imports nothing of ralph's.
package tail

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// Buffer keeps the last limit bytes written to it. It is safe for use by
// several goroutines: one can write while another reads.
type Buffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	total int
}

// New returns a Buffer that keeps the last limit bytes.
func New(limit int) *Buffer { return &Buffer{limit: limit} }

// Write keeps the end of p and never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += len(p)
	b.buf = append(b.buf, p...)
	// Trimming only past twice the limit keeps the copying amortised. One
	// byte more than the limit is kept, to tell whether the tail starts a
	// line.
	if len(b.buf) > 2*b.limit {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.limit-1:]...)
	}
	return len(p), nil
}

// String returns the last limit bytes written, or all of them when fewer
// were.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf[max(len(b.buf)-b.limit, 0):])
}

// Lines returns the kept tail starting at a line, and how many earlier
// bytes it leaves out. When output was dropped, the line it cut is left
// out too (a cut line misleads more than a missing one); when the tail is
// all one line, only a cut character is.
func (b *Buffer) Lines() (tail string, omitted int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) <= b.limit {
		return string(b.buf), 0
	}
	kept := b.buf[len(b.buf)-b.limit:]
	if b.buf[len(b.buf)-b.limit-1] != '\n' {
		kept = fromLineStart(kept)
	}
	return string(kept), b.total - len(kept)
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

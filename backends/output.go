package backends

import (
	"bytes"
	"io"
	"sync"

	"github.com/ralph-loop/ralph/internal/redact"
)

// feed carries stdout from the pipe reader to the parser. It holds at most
// feedLimit bytes: past them, a write waits for the parser to read, so
// memory stays bounded however fast the agent prints (the agent then waits
// on its pipe, as it would for any slow reader). Once the agent's group is
// gone, the reader can still be cut off after a short grace without losing
// output that was already queued for the parser.
//
// The bytes wait in a ring that grows to feedLimit at most and is then
// reused: a bytes.Buffer that a writer keeps ahead of its reader grows to
// several times what it holds, and is copied each time.
type feed struct {
	mu      sync.Mutex
	cond    *sync.Cond
	ring    []byte // what is queued: n bytes from start, wrapping around
	start   int
	n       int
	closed  bool // no more writes: Read returns io.EOF once the ring is empty
	dropped bool // the parser stopped reading: writes are discarded
}

// feedLimit is how much of stdout may wait for the parser.
const feedLimit = 4 << 20

// feedMinRing is the ring's first size: most agents never need more.
const feedMinRing = 64 << 10

func newFeed() *feed {
	f := &feed{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *feed) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	total := len(p)
	for len(p) > 0 {
		for f.n >= feedLimit && !f.dropped && !f.closed {
			f.cond.Wait()
		}
		if f.dropped || f.closed {
			break
		}
		f.grow(len(p))
		end := (f.start + f.n) % len(f.ring)
		// The free bytes after end: up to the ring's end, or to start
		// when the queued bytes wrap around.
		free := min(len(f.ring)-end, len(f.ring)-f.n)
		w := copy(f.ring[end:end+free], p)
		f.n += w
		p = p[w:]
		f.cond.Broadcast()
	}
	return total, nil
}

// grow makes room in the ring for want more bytes, as far as feedLimit
// allows. It grows fourfold: an agent that fills it reaches feedLimit in
// three steps, having allocated a third more than feedLimit on the way
// rather than as much again.
func (f *feed) grow(want int) {
	size := len(f.ring)
	if size-f.n >= want || size >= feedLimit {
		return
	}
	ring := make([]byte, min(feedLimit, max(4*size, f.n+want, feedMinRing)))
	f.n = f.copyOut(ring)
	f.ring, f.start = ring, 0
}

// copyOut copies what is queued, from start, to p, as much as fits, without
// taking it off the ring.
func (f *feed) copyOut(p []byte) int {
	first := min(f.n, len(f.ring)-f.start)
	c := copy(p, f.ring[f.start:f.start+first])
	return c + copy(p[c:], f.ring[:f.n-first])
}

func (f *feed) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n == 0 && !f.closed {
		f.cond.Wait()
	}
	if f.n == 0 {
		return 0, io.EOF
	}
	c := f.copyOut(p)
	f.start, f.n = (f.start+c)%len(f.ring), f.n-c
	f.cond.Broadcast() // a writer may wait for room
	return c, nil
}

// Close ends the stream: the parser sees EOF after what is queued.
func (f *feed) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
	return nil
}

// drop discards what is queued and all later writes, for a parser that
// returned before EOF.
func (f *feed) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropped = true
	f.ring, f.start, f.n = nil, 0, 0
	f.cond.Broadcast()
}

// rawLog is AgentRun.RawOutput shared by the stdout and stderr copiers.
// Each stream writes whole lines under the lock, so a stderr warning never
// lands in the middle of a JSON line in the iteration's raw log. A write
// error stops the raw log but not the run: it is a debugging aid.
//
// Secret values are redacted on the way, over the file's bytes as they are
// interleaved, so a value split across two writes is still hidden.
//
// At most a limit of bytes is written (OutputLimits.RawBytes), counted
// after redaction, so a cut never leaves part of a secret at the end.
type rawLog struct {
	mu  sync.Mutex
	w   *redact.Writer // nil: no raw log
	cap *capWriter     // under w
	err error          // the first write error; later writes are skipped
}

// open sends the log to w (nil: nowhere), redacted by r, its first limit
// bytes (0: all).
func (r *rawLog) open(w io.Writer, red *redact.Redactor, limit int64) {
	if w != nil {
		r.cap = &capWriter{w: w, limit: limit}
		r.w = red.NewWriter(r.cap)
	}
}

// close writes what the redactor held back at the end of the output, and
// what was cut, if anything. The copiers must be done.
func (r *rawLog) close() {
	if r.w == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.w.Close()
	}
	if r.err == nil {
		r.err = r.cap.close()
	}
}

func (r *rawLog) write(p []byte) {
	if r.w == nil || len(p) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		_, r.err = r.w.Write(p)
	}
}

// maxPendingLine is how much of an unterminated line a lineTee holds back;
// beyond it the partial line is written as is, to bound memory.
const maxPendingLine = 4 << 20

// lineTee copies one stream into a rawLog line by line. It is used by one
// goroutine only.
type lineTee struct {
	log     *rawLog
	pending []byte
}

func (t *lineTee) add(p []byte) {
	// Only p is searched: searching all that is pending again at each read
	// made a long line without a newline cost time quadratic in its length.
	i := bytes.LastIndexByte(p, '\n')
	switch {
	case i < 0:
		t.pending = append(t.pending, p...)
	case len(t.pending) == 0:
		t.log.write(p[:i+1])
		t.pending = append(t.pending, p[i+1:]...)
	default:
		// Joined in pending, whose room is kept: joining in a new slice
		// each time allocated as many bytes as the stream had.
		t.pending = append(t.pending, p[:i+1]...)
		t.log.write(t.pending)
		t.pending = append(t.pending[:0], p[i+1:]...)
	}
	if len(t.pending) > maxPendingLine {
		t.log.write(t.pending)
		t.pending = t.pending[:0]
	}
}

// flush writes an unterminated last line at EOF, ending it with a newline
// so that it does not run into the other stream's next line: the raw log
// stays one line per line, as a .jsonl file should.
func (t *lineTee) flush() {
	if len(t.pending) > 0 {
		t.log.write(append(t.pending, '\n'))
	}
	t.pending = t.pending[:0]
}

// stderrTailSize is how much of the end of stderr is kept for the verdict
// and failure messages.
const stderrTailSize = 8 << 10

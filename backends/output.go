package backends

import (
	"bytes"
	"io"
	"sync"

	"github.com/ralph-loop/ralph/internal/redact"
)

// feed carries stdout from the pipe reader to the parser. Writes never
// block, so the pipe is always being read: a slow parser cannot stall the
// agent, and once the agent's group is gone the reader can be cut off after
// a short grace without losing output that was still queued for the parser.
// Agents print at human-ish rates, so the queue stays small.
type feed struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     bytes.Buffer
	closed  bool // no more writes: Read returns io.EOF once buf is empty
	dropped bool // the parser stopped reading: writes are discarded
}

func newFeed() *feed {
	f := &feed{}
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *feed) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dropped && !f.closed {
		f.buf.Write(p)
		f.cond.Signal()
	}
	return len(p), nil
}

func (f *feed) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.buf.Len() == 0 && !f.closed {
		f.cond.Wait()
	}
	if f.buf.Len() == 0 {
		return 0, io.EOF
	}
	return f.buf.Read(p)
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
	f.buf.Reset()
}

// rawLog is AgentRun.RawOutput shared by the stdout and stderr copiers.
// Each stream writes whole lines under the lock, so a stderr warning never
// lands in the middle of a JSON line in the iteration's raw log. A write
// error stops the raw log but not the run: it is a debugging aid.
//
// Secret values are redacted on the way, over the file's bytes as they are
// interleaved, so a value split across two writes is still hidden.
type rawLog struct {
	mu  sync.Mutex
	w   *redact.Writer // nil: no raw log
	err error          // the first write error; later writes are skipped
}

// open sends the log to w (nil: nowhere), redacted by r.
func (r *rawLog) open(w io.Writer, red *redact.Redactor) {
	if w != nil {
		r.w = red.NewWriter(w)
	}
}

// close writes what the redactor held back at the end of the output. The
// copiers must be done.
func (r *rawLog) close() {
	if r.w == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = r.w.Close()
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
	t.pending = append(t.pending, p...)
	if i := bytes.LastIndexByte(t.pending, '\n'); i >= 0 {
		t.log.write(t.pending[:i+1])
		t.pending = append(t.pending[:0], t.pending[i+1:]...)
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

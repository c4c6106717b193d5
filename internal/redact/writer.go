package redact

import "io"

// Writer redacts a stream on its way to another writer. A value split
// across two writes is still hidden: the end of a write that could begin a
// value is held back until the next write shows whether it does. Close
// writes what is held. A Writer is not safe for concurrent use.
type Writer struct {
	r    *Redactor
	w    io.Writer
	held []byte // bytes not yet scanned: they may begin a value
	out  []byte // reused output buffer
	err  error  // the first write error; later writes return it
}

// NewWriter returns a Writer that redacts for r on its way to w. With a nil
// or empty r it passes everything through.
func (r *Redactor) NewWriter(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Write redacts what it can of what was held and p, and writes it.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.r.Empty() {
		return w.pass(p)
	}
	w.held = append(w.held, p...)
	out, keep := w.r.m.scan(w.out[:0], w.held, false)
	w.out = out
	w.held = append(w.held[:0], w.held[len(w.held)-keep:]...)
	if err := w.emit(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes the bytes held back, redacted as the end of the stream. It
// does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil || len(w.held) == 0 {
		return w.err
	}
	out, _ := w.r.m.scan(w.out[:0], w.held, true)
	w.held = w.held[:0]
	return w.emit(out)
}

func (w *Writer) pass(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.err = err
	return n, err
}

func (w *Writer) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

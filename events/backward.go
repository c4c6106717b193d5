package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// BackwardScanner reads a log's complete lines from the last to the first,
// in blocks from the end of the file, so that the last N lines of a log cost
// the same whatever its size. Like Reader, it leaves out a final line
// without its newline: that line is still being written.
type BackwardScanner struct {
	r io.ReaderAt
	// data holds the log's bytes [base, base+len(data)) not yet returned;
	// it ends just past a newline. spare is the other buffer, for the next
	// block.
	data, spare []byte
	base        int64
	end         int64 // just past the last complete line
	err         error // sticky, once the start is reached (io.EOF) or a read fails
	block       int   // the size of a read
}

// backwardBlock is how much BackwardScanner reads at a time.
const backwardBlock = 64 << 10

// NewBackwardScanner reads the first size bytes of r backwards.
func NewBackwardScanner(r io.ReaderAt, size int64) *BackwardScanner {
	return newBackwardScanner(r, size, backwardBlock)
}

// newBackwardScanner reads block bytes at a time; tests make it small to
// cut lines across blocks.
func newBackwardScanner(r io.ReaderAt, size int64, block int) *BackwardScanner {
	b := &BackwardScanner{r: r, base: size, block: block}
	b.err = b.trimPartial()
	b.end = b.base + int64(len(b.data))
	return b
}

// End is the offset just past the log's last complete line: where a forward
// read of what is appended next starts.
func (b *BackwardScanner) End() int64 { return b.end }

// trimPartial drops the bytes after the last newline, reading back until it
// finds one (or the start of the log, which then has no complete line).
func (b *BackwardScanner) trimPartial() error {
	for {
		if i := bytes.LastIndexByte(b.data, '\n'); i >= 0 {
			b.data = b.data[:i+1]
			return nil
		}
		b.data = b.data[:0]
		if b.base == 0 {
			return io.EOF
		}
		if err := b.load(); err != nil {
			return err
		}
	}
}

// Prev returns the line before the last one returned (the log's last
// complete line, at first), without its newline, and its offset; io.EOF
// once the first line has been returned. Blank lines are skipped, as Scan
// skips them. The line is only valid until the next call.
func (b *BackwardScanner) Prev() (int64, []byte, error) {
	for {
		offset, line, err := b.prev()
		if err != nil || !blankLine(line) {
			return offset, line, err
		}
	}
}

func (b *BackwardScanner) prev() (int64, []byte, error) {
	for {
		if len(b.data) == 0 && b.err != nil {
			return 0, nil, b.err
		}
		last := len(b.data) - 1 // the newline that ends the line to return
		if i := bytes.LastIndexByte(b.data[:max(last, 0)], '\n'); i >= 0 || (b.base == 0 && last >= 0) {
			line, offset := b.data[i+1:last:last], b.base+int64(i+1)
			b.data = b.data[:i+1]
			return offset, line, nil
		}
		if b.base == 0 {
			b.err = io.EOF
			continue
		}
		if err := b.load(); err != nil {
			b.err = err
			b.data = b.data[:0]
		}
	}
}

// load reads the block before data and puts it in front of it. The block
// grows with what is already held, so a line of any length costs linear
// time to gather.
func (b *BackwardScanner) load() error {
	n := min(b.base, int64(max(b.block, len(b.data))))
	buf := b.spare[:0]
	if need := int(n) + len(b.data); cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = buf[:int(n)+len(b.data)]
	copy(buf[n:], b.data)
	start := b.base - n
	if _, err := b.r.ReadAt(buf[:n], start); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: the log shrank while being read", io.ErrUnexpectedEOF)
		}
		return err
	}
	b.spare = b.data[:0]
	b.data, b.base = buf, start
	return nil
}

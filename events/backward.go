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
// without its newline: that line is still being written. A line longer than
// MaxLineBytes is read past, as Scan reads past it, and returned as a
// Record holding its first bytes.
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
	max         int   // the longest line returned whole
}

// backwardBlock is how much BackwardScanner reads at a time.
const backwardBlock = 64 << 10

// NewBackwardScanner reads the first size bytes of r backwards.
func NewBackwardScanner(r io.ReaderAt, size int64) *BackwardScanner {
	return newBackwardScanner(r, size, backwardBlock, MaxLineBytes)
}

// newBackwardScanner reads block bytes at a time and returns lines of up to
// maxLine bytes whole; tests make both small.
func newBackwardScanner(r io.ReaderAt, size int64, block, maxLine int) *BackwardScanner {
	b := &BackwardScanner{r: r, base: size, block: block, max: maxLine}
	b.err = b.trimPartial()
	b.end = b.base
	return b
}

// End is the offset just past the log's last complete line: where a forward
// read of what is appended next starts.
func (b *BackwardScanner) End() int64 { return b.end }

// trimPartial leaves out the bytes after the last newline, however many: it
// looks for that newline without keeping what it reads.
func (b *BackwardScanner) trimPartial() error {
	start, err := b.lineStart(b.base)
	if err != nil {
		return err
	}
	b.base = start
	if start == 0 {
		return io.EOF // no complete line
	}
	return nil
}

// lineStart is the offset just past the last newline before offset before,
// 0 when there is none, found by reading back a block at a time into spare.
func (b *BackwardScanner) lineStart(before int64) (int64, error) {
	for pos := before; pos > 0; {
		n := min(pos, int64(b.block))
		if int64(cap(b.spare)) < n {
			b.spare = make([]byte, n)
		}
		buf := b.spare[:n]
		if _, err := b.r.ReadAt(buf, pos-n); err != nil {
			return 0, shrank(err)
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return pos - n + int64(i) + 1, nil
		}
		pos -= n
	}
	return 0, nil
}

// Prev returns the line before the last one returned (the log's last
// complete line, at first) and its offset as a Record that is not decoded,
// as ScanLines gives it: Line (without its newline) is only valid until the
// next call, and Err is set only for a line too long. It returns io.EOF
// once the first line has been returned. Blank lines are skipped, as Scan
// skips them.
func (b *BackwardScanner) Prev() (Record, error) {
	for {
		rec, err := b.prev()
		if err != nil || rec.Cut > 0 || !blankLine(rec.Line) {
			return rec, err
		}
	}
}

func (b *BackwardScanner) prev() (Record, error) {
	for {
		if len(b.data) == 0 && b.err != nil {
			return Record{}, b.err
		}
		last := len(b.data) - 1 // the newline that ends the line to return
		if i := bytes.LastIndexByte(b.data[:max(last, 0)], '\n'); i >= 0 || (b.base == 0 && last >= 0) {
			line, offset := b.data[i+1:last:last], b.base+int64(i+1)
			b.data = b.data[:i+1]
			if len(line) > b.max {
				return b.cut(offset, offset+int64(len(line)))
			}
			return Record{Offset: offset, Line: line}, nil
		}
		if b.base == 0 {
			b.err = io.EOF
			continue
		}
		if last > b.max {
			return b.skip(b.base + int64(last))
		}
		if err := b.load(); err != nil {
			b.err = err
			b.data = b.data[:0]
		}
	}
}

// skip reads back past a line too long that ends at offset end, of which
// data holds the last part, and returns it as a Record.
func (b *BackwardScanner) skip(end int64) (Record, error) {
	start, err := b.lineStart(b.base)
	if err != nil {
		b.err, b.data = err, b.data[:0]
		return Record{}, err
	}
	b.data, b.base = b.data[:0], start
	return b.cut(start, end)
}

// cut reads the first bytes of the line [start, end), which is too long,
// and returns it as a Record.
func (b *BackwardScanner) cut(start, end int64) (Record, error) {
	head := make([]byte, min(cutLineKeep, b.max))
	if _, err := b.r.ReadAt(head, start); err != nil {
		b.err, b.data = shrank(err), b.data[:0]
		return Record{}, b.err
	}
	size := end - start
	return Record{Offset: start, Line: head, Cut: size - int64(len(head)), Err: tooLong(size, b.max)}, nil
}

// load reads the block before data and puts it in front of it. The block
// grows with what is already held, so a line of any length up to the limit
// costs linear time to gather.
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
		return shrank(err)
	}
	b.spare = b.data[:0]
	b.data, b.base = buf, start
	return nil
}

// shrank explains an io.EOF from ReadAt within the size the log had.
func shrank(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the log shrank while being read", io.ErrUnexpectedEOF)
	}
	return err
}

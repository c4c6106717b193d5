package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"
	"unicode/utf8"
)

// ErrMalformed is matched (with errors.Is) by the Err of every malformed
// Record and by ParseLine's errors.
var ErrMalformed = errors.New("malformed event")

// ErrLineTooLong is matched (with errors.Is, as is ErrMalformed) by the Err
// of a Record whose line is longer than MaxLineBytes.
var ErrLineTooLong = errors.New("event line too long")

// MaxLineBytes is the longest line of an event log that is read whole. A
// longer line is not an event: it comes back as a malformed Record
// (ErrLineTooLong) holding only its first bytes, read past without being
// kept in memory, so that one huge line an agent appended cannot make every
// reader of the log hold it. ralph never writes one: [Log.Append] cuts a
// payload that would make the line longer (see [FitLine]).
const MaxLineBytes = 1 << 20

// cutLineKeep is how much of a line longer than the limit a Record keeps,
// enough for a person to recognise it.
const cutLineKeep = 256

// tooLong is the Err of a Record for a line of size bytes past the limit.
func tooLong(size int64, limit int) error {
	return fmt.Errorf("%w: %w: %d bytes, more than the %d an event line may have", ErrMalformed, ErrLineTooLong, size, limit)
}

// ErrTruncated is matched by Reader.Read's error when the log is shorter than
// the offset to read from: the file was truncated or replaced, and reading on
// would skip or repeat events.
var ErrTruncated = errors.New("event log is shorter than the read offset")

// Record is one complete line of an event log.
//
// Blank lines (only whitespace) are skipped and produce no Record. Every
// other line does: Err is nil and Event is decoded, or Err (matching
// ErrMalformed) says why the line is not an event and Event is zero. A
// malformed line is data, not a failure of the read: the caller counts it.
//
// A line longer than MaxLineBytes is a malformed Record whose Err matches
// ErrLineTooLong: Line holds only its first bytes and Cut counts the rest.
type Record struct {
	Offset int64  // byte offset in the file where the line starts
	Line   []byte // the line without its trailing newline; owned by the caller
	Cut    int64  // the bytes of a line too long that Line leaves out
	Event  Event
	Err    error
}

// End is the offset just past the line's newline, where the next line starts.
func (r Record) End() int64 { return r.Offset + int64(len(r.Line)) + r.Cut + 1 }

// ParseLine decodes one log line (with or without its newline). The line must
// be a JSON object with a non-empty string "topic"; everything else is
// lenient, as Event.UnmarshalJSON describes. Errors match ErrMalformed.
func ParseLine(line []byte) (Event, error) {
	return parseLine(line, nil)
}

// A Decoder is ParseLine for the lines of one log: it shares the strings
// lines repeat (topics, hats, sources) instead of allocating them for each
// line. The zero Decoder is ready for use; it is not safe for concurrent use.
type Decoder struct {
	names interner
}

// ParseLine is the package's ParseLine.
func (d *Decoder) ParseLine(line []byte) (Event, error) {
	if d.names == nil {
		d.names = interner{}
	}
	return parseLine(line, d.names)
}

// ParseLineFields is ParseLine that also fills fields from the line's
// payload, as DecodeFields would, in the same pass over the line: a view
// that shows a few fields of each of millions of payloads reads each once.
// The fields are fieldsFor's for the topic read before the payload ("" when
// none is), or none when it returns nil. filled reports that they were
// filled, and for the line's topic; when false (fieldsFor had none, the
// payload is not an object DecodeFields is sure of, the line has more than
// one payload or another topic after it, or encoding/json decoded it) the
// fields hold anything and the caller decodes the payload itself. The event
// and error are ParseLine's, but for this: the event's payload may borrow
// line, as the fields' Bytes do, so the event is good only as long as line
// is (ParseLine copies).
func (d *Decoder) ParseLineFields(line []byte, fieldsFor func(topic string) []Field) (ev Event, filled bool, err error) {
	if d.names == nil {
		d.names = interner{}
	}
	fd := fastDecoder{data: line, names: d.names, fieldsFor: fieldsFor}
	if ev, ok := fd.event(); ok {
		return ev, fd.fieldsOK && fd.payloads == 1 && fd.fieldsTopic == ev.Topic, nil
	}
	ev, err = parseLineJSON(line)
	return ev, false, err
}

// parseLine is ParseLine sharing repeated strings through names.
func parseLine(line []byte, names interner) (Event, error) {
	if ev, ok := decodeFast(line, names); ok {
		return ev, nil
	}
	return parseLineJSON(line)
}

// parseLineJSON is ParseLine by encoding/json alone: the reference the fast
// path must agree with, and the only path that reports why a line is
// malformed.
func parseLineJSON(line []byte) (Event, error) {
	var ev Event
	if err := ev.UnmarshalJSON(line); err != nil {
		return Event{}, fmt.Errorf("%w: not a JSON event object: %w", ErrMalformed, err)
	}
	if ev.Topic == "" {
		return Event{}, fmt.Errorf(`%w: no "topic"; a line needs at least {"topic":"some.topic"}`, ErrMalformed)
	}
	return ev, nil
}

// Reader reads an event log from a byte offset, returning only complete
// lines, so it can follow a log that other processes are appending to. It
// opens the file on each Read: a log that does not exist yet reads as empty.
// A Reader is not safe for concurrent use.
type Reader struct {
	path   string
	offset int64
}

// NewReader returns a Reader of the log at path that starts at offset, which
// must be the start of a line (0, or a Record's End, or a saved Offset).
func NewReader(path string, offset int64) *Reader {
	return &Reader{path: path, offset: offset}
}

// Offset is where the next Read starts: just past the last complete line
// read so far.
func (r *Reader) Offset() int64 { return r.offset }

// minLineEstimate and maxRecordsEstimate bound Read's first guess at how
// many records it will return: a Record is about 180 bytes, so a guess of
// 1M records would be 180 MB, and a log of one huge line would be taken
// for a million lines; past the guess, the slice grows as it fills.
const (
	minLineEstimate    = 128
	maxRecordsEstimate = 1 << 14
)

// Read returns every complete line after the offset and moves the offset past
// them. A final line without its newline is still being written: it is left
// for a later Read. On error nothing is consumed and the offset stays.
func (r *Reader) Read() ([]Record, error) {
	f, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", r.path, err)
	}
	defer f.Close()

	unread, err := r.unreadBytes(f)
	if err != nil {
		return nil, err
	}
	// Sized from the bytes to read, so that a long log is not copied over
	// and over as the slice grows: most lines are longer than
	// minLineEstimate, so the estimate rarely falls short and wastes little.
	recs := make([]Record, 0, min(unread/minLineEstimate+1, maxRecordsEstimate))
	// A Read that follows a live log usually finds a line or two: size the
	// buffer to what is there rather than always allocating 64 KiB.
	bufSize := int(min(unread+1, readBufferSize))
	section := io.NewSectionReader(f, r.offset, math.MaxInt64-r.offset)
	end, err := scanLines(section, bufSize, r.offset, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", r.path, err)
	}
	r.offset = end
	if len(recs) == 0 {
		return nil, nil // none, as before any line was read
	}
	return recs, nil
}

// unreadBytes is how many bytes the file holds past the offset.
func (r *Reader) unreadBytes(f *os.File) (int64, error) {
	if r.offset < 0 {
		return 0, fmt.Errorf("read event log %s: negative offset %d", r.path, r.offset)
	}
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read event log %s: %w", r.path, err)
	}
	if info.Size() < r.offset {
		return 0, fmt.Errorf("read event log %s: %w (%d bytes, offset %d); it was truncated or replaced",
			r.path, ErrTruncated, info.Size(), r.offset)
	}
	return info.Size() - r.offset, nil
}

// Scan calls fn for each Record of the log read from rd, from its start, in
// constant memory (one line at a time, at most MaxLineBytes of it), and stops at the first
// error fn returns, which Scan returns. A final line without a newline is
// not a Record, as for Reader.
func Scan(rd io.Reader, fn func(Record) error) error {
	_, err := scanLines(rd, readBufferSize, 0, fn)
	return err
}

// ScanLines calls fn for each complete non-blank line of rd, from its start,
// and stops at the first error fn returns, which it returns. It decodes
// nothing and copies nothing: the Record has the line's Offset and Line
// (without its newline), which is only valid until fn returns, and an Err
// only for a line too long (its Cut then counts what Line leaves out). It is
// Scan for a caller that decides from a line's bytes whether it is worth
// decoding; ParseLine decodes a line whose Err is nil as Scan would.
func ScanLines(rd io.Reader, fn func(Record) error) error {
	_, err := scanRaw(rd, readBufferSize, 0, MaxLineBytes, fn)
	return err
}

// FirstLine is rd's first complete non-blank line, as ScanLines would give
// it first but copied, or ok false when rd has none. It starts with a small
// buffer, which grows only for a longer line, since a caller that wants a
// log's first line (a run's loop.started) reads a few hundred bytes of it.
func FirstLine(rd io.Reader) (rec Record, ok bool, err error) {
	_, err = scanRaw(rd, firstLineBufferSize, 0, MaxLineBytes, func(r Record) error {
		rec, ok = r, true
		rec.Line = bytes.Clone(r.Line)
		return errFirstLineRead
	})
	if errors.Is(err, errFirstLineRead) {
		err = nil
	}
	return rec, ok, err
}

// errFirstLineRead stops FirstLine's scan after one line.
var errFirstLineRead = errors.New("first line read")

// firstLineBufferSize is where FirstLine's buffer starts.
const firstLineBufferSize = 4 << 10

// readBufferSize is the largest buffer for scanning logs. Longer lines are
// still read whole; this sets the size of each read(2), large enough that
// system calls cost little next to decoding.
const readBufferSize = 256 << 10

// scanLines calls fn for each complete non-blank line of rd, whose first byte
// is at offset start, reading bufSize bytes at a time. It returns the offset
// just past the last complete line.
func scanLines(rd io.Reader, bufSize int, start int64, fn func(Record) error) (int64, error) {
	var dec Decoder
	return scanRaw(rd, bufSize, start, MaxLineBytes, func(rec Record) error {
		// The line is the caller's to keep, so it gets its own copy.
		rec.Line = bytes.Clone(rec.Line)
		if rec.Err == nil {
			rec.Event, rec.Err = dec.ParseLine(rec.Line)
		}
		return fn(rec)
	})
}

// scanBuffers keeps the buffers of finished scans of readBufferSize, so
// that reading many logs in a row (ralph stats, ralph runs) does not
// allocate a quarter of a megabyte for each. No Record's Line outlives its
// scan's fn, so a buffer is free once its scan returns.
var scanBuffers = sync.Pool{New: func() any { return new([readBufferSize]byte) }}

func scanBuffer(size int) []byte {
	if size != readBufferSize {
		return make([]byte, max(size, 1))
	}
	return scanBuffers.Get().(*[readBufferSize]byte)[:]
}

// releaseScanBuffer returns buf to scanBuffers unless the scan grew it
// (for a long line) or did not take it from there.
func releaseScanBuffer(buf []byte) {
	if len(buf) == readBufferSize {
		scanBuffers.Put((*[readBufferSize]byte)(buf))
	}
}

// scanRaw is ScanLines from offset start, for lines of up to maxLine bytes,
// with the offset just past the last complete line.
func scanRaw(rd io.Reader, bufSize int, start int64, maxLine int, fn func(Record) error) (int64, error) {
	ls := lineScanner{rd: rd, buf: scanBuffer(bufSize), offset: start, max: maxLine}
	defer releaseScanBuffer(ls.buf[:cap(ls.buf)])
	for {
		offset, line, cut, err := ls.next()
		if errors.Is(err, io.EOF) {
			return ls.offset, nil // any bytes left are an incomplete line
		}
		if err != nil {
			return ls.offset, err
		}
		rec := Record{Offset: offset, Line: line, Cut: cut}
		if cut > 0 {
			rec.Err = tooLong(int64(len(line))+cut, maxLine)
		} else if blankLine(line) {
			continue
		}
		if err := fn(rec); err != nil {
			return ls.offset, err
		}
	}
}

// blankLine reports whether a line holds only whitespace, as bytes.TrimSpace
// sees it, without scanning a line that starts with its JSON.
func blankLine(line []byte) bool {
	return len(line) == 0 || (line[0] <= ' ' || line[0] >= utf8.RuneSelf) && len(bytes.TrimSpace(line)) == 0
}

// lineScanner splits a reader into lines borrowed from one buffer, which
// grows only for a line longer than itself: bufio.Reader.ReadBytes would
// allocate every line. A line longer than max is read past rather than
// gathered: only its first cutLineKeep bytes are kept.
type lineScanner struct {
	rd  io.Reader
	buf []byte
	max int // the longest line returned whole
	// buf[start:end] is read but not yet returned; buf[start:searched]
	// holds no newline.
	start, end, searched int
	offset               int64 // the offset of buf[start], or of the line being skipped
	err                  error // from the last read, returned once the buffer is used up
	empty                int   // reads in a row that returned nothing
	// While a line longer than max is read past: its first bytes, and how
	// many of its bytes were dropped from buf.
	skipping bool
	head     []byte
	dropped  int64
}

// next returns the next complete line without its newline, valid until the
// next call, or io.EOF when only an incomplete line (or nothing) is left.
// For a line longer than max it returns the line's first bytes and how many
// it leaves out.
func (s *lineScanner) next() (offset int64, line []byte, cut int64, err error) {
	for {
		if i := bytes.IndexByte(s.buf[s.searched:s.end], '\n'); i >= 0 {
			return s.take(s.searched + i)
		}
		s.searched = s.end
		if !s.skipping && s.end-s.start > s.max {
			s.skipping = true
			s.head = append(s.head[:0], s.buf[s.start:s.start+min(cutLineKeep, s.max)]...)
		}
		if s.skipping {
			// What is read of the line is dropped as soon as it is
			// searched, so that the buffer never holds more than a read.
			s.dropped += int64(s.end - s.start)
			s.start = s.end
		}
		if s.err != nil {
			return s.offset, nil, 0, s.err
		}
		s.fill()
	}
}

// take returns the line that ends at the newline buf[end].
func (s *lineScanner) take(end int) (offset int64, line []byte, cut int64, err error) {
	offset = s.offset
	size := s.dropped + int64(end-s.start)
	switch {
	case s.skipping:
		line = s.head
	case size > int64(s.max):
		line = append(s.head[:0], s.buf[s.start:s.start+min(cutLineKeep, s.max)]...)
		s.head = line
	default:
		line = s.buf[s.start:end:end]
	}
	s.offset += size + 1
	s.start, s.searched = end+1, end+1
	s.skipping, s.dropped = false, 0
	return offset, line, size - int64(len(line)), nil
}

// fill reads more after what is buffered, first moving the unreturned
// bytes to the front, or growing the buffer when they fill it.
func (s *lineScanner) fill() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.searched -= s.start
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	n, err := s.rd.Read(s.buf[s.end:])
	s.end += n
	switch {
	case err != nil:
		s.err = err
	case n > 0:
		s.empty = 0
	default:
		s.empty++
		if s.empty == 100 {
			s.err = io.ErrNoProgress // as bufio gives up on a reader that returns nothing
		}
	}
}

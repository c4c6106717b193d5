package backends

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ralph-loop/ralph/events"
)

// OutputLimits bound what ralph keeps of one agent run's output, in memory
// and on disk, so that an agent that prints without end (a loop printing
// hundreds of megabytes, one JSON line of a gigabyte) costs ralph a bounded
// amount: the output pipes are always read, and what is past a limit is
// counted, not kept. Wherever a limit cuts, a note says so. A zero field
// takes its default (DefaultOutputLimits); a negative one means no limit.
type OutputLimits struct {
	// LineBytes is the longest line of stdout a parser is given. The rest
	// of a longer line is left out: a JSON line so cut no longer decodes
	// and is skipped; a line of text loses its end. An ActivityWarning
	// says how many lines were cut.
	LineBytes int
	// TextBytes is how much of the final text is kept when it is gathered
	// from many lines (a plain-text CLI's stdout, gemini's deltas): its
	// end, where <event> tags are looked for, after a line that says how
	// much was cut.
	TextBytes int
	// ActivityBytes bounds the activity reported for one run, counted as
	// the bytes of its text, path and command plus activityOverhead for each
	// report. Past it, only usage (summed, at the end) and rate limits are
	// reported, after an ActivityWarning that says so. Each report's text
	// is cut to maxActivityText, with a note, whatever this limit.
	ActivityBytes int
	// RawBytes is how many bytes of output (stdout and stderr as they
	// interleave, redacted) AgentRun.RawOutput gets; a last line says how
	// many more there were.
	RawBytes int64
}

// DefaultOutputLimits are the limits where a field of OutputLimits is zero.
// They are ralph.yml's defaults (event_loop.max_output_line_bytes,
// max_output_text_bytes, max_activity_bytes, max_raw_output_bytes).
var DefaultOutputLimits = OutputLimits{
	LineBytes:     16 << 20,
	TextBytes:     maxTextOutput,
	ActivityBytes: 1 << 20,
	RawBytes:      1 << 30,
}

// resolved gives each field its default when it is zero, and 0 (no limit)
// when it is negative.
func (l OutputLimits) resolved() OutputLimits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	d := DefaultOutputLimits
	return OutputLimits{
		LineBytes:     int(pick(int64(l.LineBytes), int64(d.LineBytes))),
		TextBytes:     int(pick(int64(l.TextBytes), int64(d.TextBytes))),
		ActivityBytes: int(pick(int64(l.ActivityBytes), int64(d.ActivityBytes))),
		RawBytes:      pick(l.RawBytes, d.RawBytes),
	}
}

// lineCutter passes a stream on with each line cut to at most limit bytes,
// its newline kept. The last bytes before a cut are held back until the
// line is known to fit, and a cut line ends at a space or tab among them
// (or loses them all): a secret value the cut would halve is then not half
// passed on, where the redactor, seeing only its first part, could not hide
// it. It is read by one goroutine (the parser's).
type lineCutter struct {
	r     io.Reader
	limit int
	hold  int // how many bytes before the limit are held back

	buf      []byte // what was read from r
	out      []byte // what is ready to be read, from outRead on
	outRead  int
	held     []byte // the line's bytes past limit-hold, while it may fit
	inLine   int    // bytes of the current line read so far
	dropping bool   // the current line was cut: the rest of it is dropped

	cutLines int   // lines cut
	cutBytes int64 // bytes left out
}

// cutHold is how many bytes before the cut are held back, at most.
const cutHold = 4 << 10

func newLineCutter(r io.Reader, limit int) *lineCutter {
	return &lineCutter{r: r, limit: limit, hold: min(cutHold, limit/2), buf: make([]byte, 64<<10)}
}

func (c *lineCutter) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		n, err := c.r.Read(c.buf)
		c.cut(c.buf[:n])
		if len(c.out) == 0 && err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out[c.outRead:])
	c.outRead += n
	if c.outRead == len(c.out) {
		// Reused: one read of buf and the bytes held back bound it, and
		// a new one for each read was as many bytes allocated as read.
		c.out, c.outRead = c.out[:0], 0
	}
	return n, nil
}

// cut moves what b holds to out, cutting lines past the limit.
func (c *lineCutter) cut(b []byte) {
	for len(b) > 0 {
		seg, rest, nl := b, []byte(nil), false
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			seg, rest, nl = b[:i], b[i+1:], true
		}
		c.segment(seg)
		if nl {
			if !c.dropping {
				c.out = append(c.out, c.held...)
			}
			c.out = append(c.out, '\n')
			c.held, c.inLine, c.dropping = c.held[:0], 0, false
		}
		b = rest
	}
}

// segment takes in part of a line, without its newline.
func (c *lineCutter) segment(seg []byte) {
	if c.dropping {
		c.cutBytes += int64(len(seg))
		return
	}
	free := max(c.limit-c.hold-c.inLine, 0) // what may pass at once
	pass := min(len(seg), free)
	c.out = append(c.out, seg[:pass]...)
	c.inLine += pass
	seg = seg[pass:]
	room := c.limit - c.inLine // what may still be held
	if len(seg) <= room {
		c.held = append(c.held, seg...)
		c.inLine += len(seg)
		return
	}
	c.held = append(c.held, seg[:room]...)
	kept := c.held
	if i := bytes.LastIndexAny(kept, " \t"); i >= 0 {
		kept = kept[:i]
	} else {
		kept = nil
	}
	c.out = append(c.out, kept...)
	c.cutLines++
	c.cutBytes += int64(len(c.held)-len(kept)) + int64(len(seg)-room)
	c.held, c.dropping = c.held[:0], true
}

// warning is the ActivityWarning about the lines cut, "" when none was.
func (c *lineCutter) warning() string {
	if c.cutLines == 0 {
		return ""
	}
	return fmt.Sprintf("%d line(s) of the agent's output were longer than %d bytes and were cut (%d bytes left out; max_output_line_bytes): a JSON line so cut is skipped; the whole output is in the iteration's raw output file",
		c.cutLines, c.limit, c.cutBytes)
}

// maxActivityText bounds each text field of one activity report: past it,
// the field is cut and ends with a note.
const maxActivityText = 64 << 10

// activityOverhead is what one activity report counts against
// OutputLimits.ActivityBytes besides its text: about what its line in
// activity.jsonl takes besides the text.
const activityOverhead = 96

// activityBudget passes activity on until what was reported of one run
// reaches its limit (0: none). Past it, text, tool and error reports are
// left out, usage is summed and reported once at the end (so the counts
// still add up), and rate limits and ralph's own few warnings pass; a
// warning says so once.
type activityBudget struct {
	report  func(events.Activity)
	limit   int
	used    int
	over    bool
	dropped int
	usage   events.Usage
	cost    float64
	summed  bool // usage was summed past the limit
}

func (b *activityBudget) add(a events.Activity) {
	a.Text, a.Path, a.Command = cutField(a.Text), cutField(a.Path), cutField(a.Command)
	switch a.Kind {
	case events.ActivityRateLimit, events.ActivityWarning:
		b.report(a)
		return
	case events.ActivityUsage:
		if b.over {
			b.usage, b.cost, b.summed = b.usage.Add(a.Usage), b.cost+a.CostUSD, true
			return
		}
		b.report(a)
		return
	case events.ActivityText, events.ActivityTool, events.ActivityError:
	}
	size := len(a.Text) + len(a.Path) + len(a.Command) + len(a.ToolName) + activityOverhead
	if b.limit <= 0 || (!b.over && b.used+size <= b.limit) {
		b.used += size
		b.report(a)
		return
	}
	if !b.over {
		b.over = true
		b.report(events.Activity{Kind: events.ActivityWarning, Text: fmt.Sprintf(
			"the agent's activity in this iteration passed %d bytes: what it does next is not shown, nor recorded in activity.jsonl (max_activity_bytes); its tokens are still counted, and the whole output is in the iteration's raw output file",
			b.limit)})
	}
	b.dropped++
}

// full reports whether text, tool and error reports are left out now.
func (b *activityBudget) full() bool { return b.over }

// finish reports the usage summed past the limit and how much was left
// out, once the parser is done.
func (b *activityBudget) finish() {
	if b.summed {
		b.report(events.Activity{Kind: events.ActivityUsage, Usage: b.usage, CostUSD: b.cost})
	}
	if b.dropped > 0 {
		b.report(events.Activity{Kind: events.ActivityWarning, Text: fmt.Sprintf(
			"%d activity report(s) of this iteration were left out past max_activity_bytes", b.dropped)})
	}
}

// cutField cuts one text field of an activity to maxActivityText, with a
// note of how much was left out.
func cutField(s string) string {
	if len(s) <= maxActivityText {
		return s
	}
	keep := maxActivityText
	for keep > 0 && s[keep]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		keep--
	}
	return fmt.Sprintf("%s … [%d bytes more, cut by ralph; the whole is in the iteration's raw output file]", s[:keep], len(s)-keep)
}

// capWriter passes the first limit bytes written to w on (0: all), and
// counts the rest. Written to under rawLog's lock.
type capWriter struct {
	w       io.Writer
	limit   int64
	written int64
	cut     int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.limit <= 0 {
		return c.w.Write(p)
	}
	pass := int(min(int64(len(p)), max(c.limit-c.written, 0)))
	c.cut += int64(len(p) - pass)
	if pass == 0 {
		return len(p), nil
	}
	n, err := c.w.Write(p[:pass])
	c.written += int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}

// close ends the file with a line saying what was left out, if anything.
func (c *capWriter) close() error {
	if c.cut == 0 {
		return nil
	}
	_, err := fmt.Fprintf(c.w, "\n[ralph: the raw output stops here: %d more bytes were not written (max_raw_output_bytes: %d)]\n", c.cut, c.limit)
	return err
}

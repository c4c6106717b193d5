package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// What `ralph events` reads of ralph's own bookkeeping payloads. These
// mirror the engine's records (engine/records.go) field by field, for the
// fields a person wants to see; a field the engine drops reads as zero.
type (
	viewLoopStarted struct {
		RunID     string `json:"run_id"`
		Objective string `json:"objective"`
		Source    string `json:"objective_source"`
		MaxIter   int    `json:"max_iterations"`
	}
	viewLoopResumed struct {
		Iteration int `json:"iteration"`
	}
	viewIterationStarted struct {
		Hat        string  `json:"hat"`
		Events     []int64 `json:"events"`
		Confirming bool    `json:"confirming"`
		Backend    string  `json:"backend"`
		Sandbox    string  `json:"sandbox"`
	}
	viewIterationFinished struct {
		Hat        string              `json:"hat"`
		Outcome    runfiles.Outcome    `json:"outcome"`
		Failure    events.FailureKind  `json:"failure"`
		Message    string              `json:"message"`
		DurationMS int64               `json:"duration_ms"`
		Tokens     events.Usage        `json:"tokens"`
		CostUSD    float64             `json:"cost_usd"`
		CostSource runfiles.CostSource `json:"cost_source"`
	}
	viewSettled struct {
		Note string `json:"note"`
	}
	viewRouted struct {
		Topic string               `json:"topic"`
		To    []string             `json:"to"`
		As    runfiles.Disposition `json:"as"`
	}
	viewRejected struct {
		Topic  string `json:"topic"`
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	}
	viewDropped struct {
		Offsets []int64 `json:"offsets"`
		Hat     string  `json:"hat"`
		Reason  string  `json:"reason"`
	}
	viewRepaired struct {
		Offset int64 `json:"offset"`
	}
	viewTerminate struct {
		Reason      runfiles.Reason     `json:"reason"`
		ExitCode    int                 `json:"exit_code"`
		Message     string              `json:"message"`
		Cause       runfiles.Cause      `json:"cause"`
		GoOn        *runfiles.GoOn      `json:"go_on"`
		Iterations  int                 `json:"iterations"`
		CostUSD     float64             `json:"cost_usd"`
		CostSource  runfiles.CostSource `json:"cost_source"`
		CostUnknown bool                `json:"cost_unknown"`
		Tokens      int64               `json:"tokens"`
		RuntimeMS   int64               `json:"runtime_ms"`
	}
	viewCommit struct {
		Hash    string `json:"hash"`
		Subject string `json:"subject"`
	}
	viewRateLimited struct {
		Message string `json:"message"`
		WaitMS  int64  `json:"wait_ms"`
	}
	viewConfirming struct {
		Claim string `json:"claim"`
	}
	viewTaskComplete struct {
		Index int    `json:"index"`
		Text  string `json:"text"`
	}
	// viewWho is the iteration and hat a bookkeeping line is about.
	viewWho struct {
		Iteration int    `json:"iteration"`
		Hat       string `json:"hat"`
	}
)

// describe renders an event's payload for the table: ralph's own lines as a
// short sentence (event.routed as "build.done → reviewer"), anything else
// as its text.
func describe(ev events.Event) string {
	if ev.Source != events.SourceRalph || !isObject(ev.Payload) {
		return ev.PayloadText()
	}
	if d, ok := describers[ev.Topic]; ok {
		if s, ok := d(ev); ok {
			return s
		}
	}
	return ev.PayloadText()
}

// A describer renders one topic of ralph's bookkeeping lines; false when
// the payload does not decode.
type describer func(events.Event) (string, bool)

// describeAs is a describer that decodes the payload into P for f.
func describeAs[P any](f func(P) string) describer {
	return func(ev events.Event) (string, bool) {
		var p P
		if !decodeView(ev, &p) {
			return "", false
		}
		return f(p), true
	}
}

// describers are the sentences for ralph's bookkeeping lines, by topic.
var describers = map[string]describer{
	runfiles.TopicLoopStarted: describeAs(func(p viewLoopStarted) string {
		return fmt.Sprintf("run %s · objective from %s: %s", p.RunID, orDash(p.Source), FirstLine(p.Objective))
	}),
	runfiles.TopicLoopResumed: describeAs(func(p viewLoopResumed) string {
		return fmt.Sprintf("resumed after iteration %d", p.Iteration)
	}),
	runfiles.TopicIterationStarted:  describeAs(describeStarted),
	runfiles.TopicIterationFinished: describeAs(describeFinished),
	runfiles.TopicIterationSettled: describeAs(func(p viewSettled) string {
		return p.Note
	}),
	runfiles.TopicEventRouted: describeAs(describeRouted),
	runfiles.TopicEventRejected: describeAs(func(p viewRejected) string {
		return strings.TrimSuffix(fmt.Sprintf("%s ✗ %s: %s", p.Topic, p.Reason, p.Detail), ": ")
	}),
	runfiles.TopicEventDropped: describeAs(func(p viewDropped) string {
		return fmt.Sprintf("%s for %s dropped: %s", plural.Count(len(p.Offsets), "event", "events"), p.Hat, p.Reason)
	}),
	runfiles.TopicLoopRepaired: describeAs(func(p viewRepaired) string {
		return fmt.Sprintf("closed a line cut off at byte %d", p.Offset)
	}),
	runfiles.TopicLoopTerminate: describeAs(describeTerminate),
	runfiles.TopicCommit: describeAs(func(p viewCommit) string {
		return shortHash(p.Hash) + " " + p.Subject
	}),
	runfiles.TopicRateLimited: describeAs(func(p viewRateLimited) string {
		return strings.TrimSuffix("waiting "+humanDuration(time.Duration(p.WaitMS)*time.Millisecond)+": "+p.Message, ": ")
	}),
	runfiles.TopicLoopPaced: describeAs(func(p runfiles.PacedRecord) string {
		return PacedText(p) + ", waiting " + humanDuration(time.Duration(p.WaitMS)*time.Millisecond)
	}),
	runfiles.TopicBackendSwitched: describeAs(SwitchText),
	runfiles.TopicWaveStarted: describeAs(func(p runfiles.WaveStartedRecord) string {
		return fmt.Sprintf("%s: %s, %d at once", p.Hat, plural.Count(p.Total, "worker", "workers"), p.Concurrency)
	}),
	runfiles.TopicWaveWorkerFinished: describeAs(func(p runfiles.WaveWorkerRecord) string {
		s := fmt.Sprintf("%s worker %d %s %s", p.Hat, p.Index+1, p.Outcome, humanDuration(time.Duration(p.DurationMS)*time.Millisecond))
		if p.Message != "" {
			s += ": " + p.Message
		}
		if p.Moved {
			s += "; it runs again on the next backend"
		}
		return s
	}),
	runfiles.TopicWaveFinished: describeAs(func(p runfiles.WaveFinishedRecord) string {
		s := fmt.Sprintf("%s: %d of %d workers have a result, %s merged", p.Hat, len(p.Succeeded), p.Total, plural.Count(p.Lines, "event", "events"))
		if len(p.Stopped) > 0 {
			s += fmt.Sprintf("; %d stopped by %s", len(p.Stopped), p.Limit.LimitName())
		}
		return s
	}),
	runfiles.TopicCompletionConfirm: describeAs(func(p viewConfirming) string {
		return "confirming the claim: " + p.Claim
	}),
	runfiles.TopicTaskComplete: describeAs(func(p viewTaskComplete) string {
		return fmt.Sprintf("box %d checked: %s", p.Index+1, p.Text)
	}),
}

func describeStarted(p viewIterationStarted) string {
	s := p.Hat
	if p.Backend != "" {
		s += " (" + agentOf(Run{Backend: p.Backend, Sandbox: p.Sandbox}) + ")"
	}
	if p.Confirming {
		return s + " · confirming the completion claim"
	}
	return fmt.Sprintf("%s · %s", s, plural.Count(len(p.Events), "event", "events"))
}

// describeFinished is "builder success 12s 1.2k tok $0.0100", with the
// cost's source when it was not reported ("$0.0100 (computed)", "cost
// unknown") and the failure's message when there is one.
func describeFinished(p viewIterationFinished) string {
	s := fmt.Sprintf("%s %s %s %s tok %s", p.Hat, p.Outcome,
		humanDuration(time.Duration(p.DurationMS)*time.Millisecond), humanCount(p.Tokens.Total()), finishedCost(p.CostUSD, p.CostSource))
	if p.Failure != "" {
		s += " · " + string(p.Failure)
		if p.Message != "" {
			s += ": " + p.Message
		}
	}
	return s
}

func describeRouted(p viewRouted) string {
	return routeText(p.Topic, p.To, p.As)
}

func describeTerminate(p viewTerminate) string {
	cost := runfiles.CostTotal{USD: p.CostUSD, Computed: p.CostSource == runfiles.CostComputed, Unknown: p.CostUnknown}
	s := fmt.Sprintf("%s (exit %d) · %s · %s · %s tok · %s", p.Reason, p.ExitCode,
		plural.Count(p.Iterations, "iteration", "iterations"), humanDuration(time.Duration(p.RuntimeMS)*time.Millisecond),
		humanCount(p.Tokens), costCell(CostText(cost)))
	if msg := EndMessage(runfiles.Termination{Reason: p.Reason, Message: p.Message, Cause: p.Cause, GoOn: p.GoOn}); msg != "" {
		s += " · " + msg
	}
	return s
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func decodeView(ev events.Event, v any) bool {
	return json.Unmarshal(ev.Payload, v) == nil
}

// who is the iteration and hat an event belongs to: its own fields, or for
// ralph's bookkeeping lines (which have none) the ones in its payload.
func Who(ev events.Event) (iteration int, hat string) {
	iteration, hat = ev.Iteration, ev.Hat
	if (iteration == 0 || hat == "") && ev.Source == events.SourceRalph && isObject(ev.Payload) {
		var p viewWho
		if fastWho(ev.Payload, &p) || decodeView(ev, &p) {
			if iteration == 0 {
				iteration = p.Iteration
			}
			if hat == "" {
				hat = p.Hat
			}
		}
	}
	return iteration, hat
}

// fastWho decodes the payload's iteration and hat without reflection when
// it can (a filter on --hat asks for every line of a long log); false
// leaves p zero for encoding/json to decode.
func fastWho(payload []byte, p *viewWho) bool {
	if events.DecodeFields(payload, events.Field{Key: "iteration", Int: &p.Iteration}, events.Field{Key: "hat", Str: &p.Hat}) {
		return true
	}
	*p = viewWho{}
	return false
}

// EventPrinter writes records as the `ralph events` table or as raw JSON
// lines.
type EventPrinter struct {
	W    io.Writer
	JSON bool // raw JSON lines instead of the table
	// Payload prints only each event's payload, whole (see PayloadFull),
	// instead of the table.
	Payload bool
	Loc     *time.Location // the table's times are in Loc
	// Autopilot says the records are an autopilot's events, which the
	// table describes as `ralph autopilot` shows them.
	Autopilot bool
	// Malformed counts lines that are not events, which JSON leaves out
	// so its output stays valid for jq.
	Malformed int
	// Redactor hides the reader's secret values in what is printed: a
	// line an agent appended to the log by hand holds them in clear (see
	// RedactRecord). Nil hides nothing.
	Redactor *redact.Redactor

	row   []byte     // the table row being built, reused
	fast  *fastRows  // the table's fast path, made with the first row
	clock clockCache // the time of day of the last row's second
	cells cellCache  // the hat, source and topic cells of recent rows
}

// A column is one of the table's text columns whose cells cellCache keeps.
type column struct {
	width    int
	sanitize bool // the cell is Sanitize of the value
}

var (
	hatColumn    = column{width: 12}
	sourceColumn = column{width: 6}
	topicColumn  = column{width: 24, sanitize: true}
)

// cellCache keeps the cells of the values a log repeats on every line (a
// few sources, topics and hats), padded, so that a row copies each rather
// than checking, measuring and padding it again. It is direct-mapped: a
// value that collides with another is made again.
type cellCache [64]cachedCell

// cachedCell is value's cell in col.
type cachedCell struct {
	value string
	col   column
	cell  []byte
}

// appendCell is appendCell(row, value, col.width), of Sanitize(value) for
// a column that sanitizes.
func (c *cellCache) appendCell(row []byte, value string, col column) []byte {
	e := &c[cellSlot(value, col)%len(c)]
	// Values are mostly the decoder's shared strings, which compare equal
	// by their address, without reading their bytes.
	if e.cell == nil || e.col != col || e.value != value {
		e.fill(value, col)
	}
	return append(row, e.cell...)
}

// appendBytesCell is appendCell for a value borrowed from a payload.
func (c *cellCache) appendBytesCell(row []byte, value []byte, col column) []byte {
	e := &c[cellSlot(value, col)%len(c)]
	if e.cell == nil || e.col != col || e.value != string(value) {
		e.fill(string(value), col)
	}
	return append(row, e.cell...)
}

// cellSlot spreads values over the cache by their length and ends.
func cellSlot[S ~string | ~[]byte](value S, col column) int {
	h := col.width
	if n := len(value); n > 0 {
		h += n*7 + int(value[0]) + 3*int(value[n-1])
	}
	return h
}

// fill makes e value's cell in col.
func (e *cachedCell) fill(value string, col column) {
	text := value
	if col.sanitize {
		text = Sanitize(value)
	}
	e.value, e.col, e.cell = value, col, appendCell(e.cell[:0], text, col.width)
}

// clockCache is the time of day of one second in one location: a log's
// lines come many to a second, and each time of day would otherwise look
// up its location's zone again.
type clockCache struct {
	sec  int64
	loc  *time.Location
	text []byte
}

// appendClock is appendClock(row, t.In(p.Loc)), from the cache when t is
// in the same second as the last time.
func (p *EventPrinter) appendClock(row []byte, t time.Time) []byte {
	c := &p.clock
	if sec := t.Unix(); c.text == nil || sec != c.sec || c.loc != p.Loc {
		c.text = appendClock(c.text[:0], t.In(p.Loc))
		c.sec, c.loc = sec, p.Loc
	}
	return append(row, c.text...)
}

// Table columns. Fixed widths instead of text/tabwriter, which holds every
// row until it is flushed: the table must stream (a log of a million lines,
// or --follow, where rows arrive over hours). A wider value pushes its row
// along rather than being cut.
const tableFormat = "%-8s  %4s  %-12s  %-6s  %-24s  %s\n"

func (p *EventPrinter) Header() error {
	if p.JSON || p.Payload {
		return nil
	}
	_, err := fmt.Fprintf(p.W, tableFormat, "TIME", "ITER", "HAT", "SOURCE", "TOPIC", "PAYLOAD")
	return err
}

// Print writes one record. It keeps nothing of rec once it returns, so a
// caller may pass a line it is about to reuse.
func (p *EventPrinter) Print(rec events.Record) error {
	return p.print(rec, false)
}

// decode is dec.ParseLine for a line about to be printed: the table fills
// its row's fields from the payload in the same pass, and filled, passed
// on to print with the record, says it did. The event may borrow line
// (see events.Decoder.ParseLineFields): it is to be printed before line is
// reused, and not kept.
func (p *EventPrinter) decode(dec *events.Decoder, line []byte) (ev events.Event, filled bool, err error) {
	if p.JSON || p.Payload || p.Autopilot {
		ev, err = dec.ParseLine(line)
		return ev, false, err
	}
	return p.fastRows().decode(dec, line)
}

// fastRows is the table's fast path, made when first needed.
func (p *EventPrinter) fastRows() *fastRows {
	if p.fast == nil {
		p.fast = newFastRows()
	}
	return p.fast
}

// print is Print for a record decode decoded, filled as it said.
func (p *EventPrinter) print(rec events.Record, filled bool) error {
	if p.LeavesOutMalformed() && rec.Err != nil {
		p.Malformed++
		return nil
	}
	if shown, hid := RedactRecord(p.Redactor, rec); hid {
		rec, filled = shown, false
	}
	if p.JSON || p.Payload {
		line := rec.Line
		if p.Payload {
			line = []byte(PayloadFull(rec.Event))
		}
		if _, err := p.W.Write(line); err != nil {
			return err
		}
		if bytes.HasSuffix(line, []byte("\n")) {
			return nil
		}
		_, err := io.WriteString(p.W, "\n")
		return err
	}
	if rec.Err != nil {
		what, text := "(malformed)", Clip(Sanitize(string(rec.Line)), 80)
		if errors.Is(rec.Err, events.ErrLineTooLong) {
			what = "(too long)"
			text = fmt.Sprintf("%d bytes, not read: %s", int64(len(rec.Line))+rec.Cut, Clip(Sanitize(string(rec.Line)), 60))
		}
		_, err := fmt.Fprintf(p.W, tableFormat, "-", "-", "-", "-", what, text)
		return err
	}
	p.row = p.appendDecodedRow(p.row[:0], rec.Event, filled)
	_, err := p.W.Write(p.row)
	return err
}

// LeavesOutMalformed reports whether lines that are not events are left
// out (and counted in Malformed) rather than shown: in JSON, to keep the
// output valid for jq, and in payloads, which such lines have none of.
func (p *EventPrinter) LeavesOutMalformed() bool { return p.JSON || p.Payload }

// PayloadFull is ev's payload as `ralph events --payload` prints it, whole:
// a text payload as it is, an object or array indented, so that a hand-off
// written as JSON reads as the agent's prompt shows it.
func PayloadFull(ev events.Event) string {
	raw := bytes.TrimSpace(ev.Payload)
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") == nil {
			return out.String()
		}
	}
	return ev.PayloadText()
}

// appendRow appends ev's table row as tableFormat lays it out, without fmt
// and without a string per cell: a listing prints a row for each of
// possibly millions of lines.
func (p *EventPrinter) appendRow(row []byte, ev events.Event) []byte {
	return p.appendDecodedRow(row, ev, false)
}

// appendDecodedRow is appendRow for an event decode decoded, filled as it
// said.
func (p *EventPrinter) appendDecodedRow(row []byte, ev events.Event, filled bool) []byte {
	var c rowCells
	fast := false
	if !p.Autopilot {
		c, fast = p.fastRows().cells(ev, filled)
	}
	if !fast {
		c.iteration, c.hat = Who(ev)
	}
	iteration := c.iteration
	start := len(row)
	if ev.TS.IsZero() {
		row = append(row, '-')
	} else {
		row = p.appendClock(row, ev.TS)
	}
	row = pad(row, 8-utf8.RuneCount(row[start:]))
	row = append(row, "  "...)
	if iteration == 0 {
		row = append(pad(row, 3), '-')
	} else {
		var digits [20]byte
		n := strconv.AppendInt(digits[:0], int64(iteration), 10)
		row = append(pad(row, 4-len(n)), n...)
	}
	if c.hat == "" && len(c.payloadHat) > 0 {
		row = p.cells.appendBytesCell(row, c.payloadHat, hatColumn)
	} else {
		row = p.cells.appendCell(row, orDash(c.hat), hatColumn)
	}
	row = p.cells.appendCell(row, orDash(ev.Source), sourceColumn)
	row = p.cells.appendCell(row, ev.Topic, topicColumn)
	row = append(row, "  "...)
	switch {
	case fast && plainCell(c.text, 100):
		row = append(row, c.text...)
	case fast:
		row = append(row, Clip(Sanitize(string(c.text)), 100)...)
	default:
		row = append(row, Clip(Sanitize(p.describe(ev)), 100)...)
	}
	return append(row, '\n')
}

// appendCell appends the column gap and s, left-aligned in width runes as
// fmt's %-*s pads it.
func appendCell[S ~string | ~[]byte](row []byte, s S, width int) []byte {
	row = append(row, "  "...)
	start := len(row)
	row = append(row, s...)
	return pad(row, width-utf8.RuneCount(row[start:]))
}

// pad appends n spaces (none when n <= 0), a cell's width at a time
// rather than a byte at a time: every row pads four cells.
func pad(row []byte, n int) []byte {
	for n > len(spaces) {
		row = append(row, spaces...)
		n -= len(spaces)
	}
	if n > 0 {
		row = append(row, spaces[:n]...)
	}
	return row
}

// spaces is what pad appends, as wide as the widest column.
const spaces = "                        "

// describe is the table's payload cell: an autopilot's events in the
// words `ralph autopilot` prints, a loop's as describe renders them.
func (p *EventPrinter) describe(ev events.Event) string {
	if !p.Autopilot || ev.Source != events.SourceRalph || !isObject(ev.Payload) {
		return describe(ev)
	}
	if text := AutopilotEventText(ev); text != "" {
		return text
	}
	// task.running, which `ralph autopilot` does not show.
	if r := runfiles.DecodeAutopilotPayload(ev); ev.Topic == runfiles.TopicTaskRunning && r.Task != "" {
		return fmt.Sprintf("slot %s: the loop of %s runs (pid %d)", r.Slot, r.Task, r.PID)
	}
	return ev.PayloadText()
}

// clip shortens s to one line of at most n runes for a table cell.
func Clip(s string, n int) string {
	if spacedOnce(s) && len(s) <= n {
		return s // ASCII, so its length is its runes
	}
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// spacedOnce reports whether s is ASCII that strings.Fields and a join
// would leave as it is: no whitespace but single spaces between words.
func spacedOnce(s string) bool {
	prev := byte(' ') // a leading space is not kept
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf, c == ' ' && prev == ' ', c != ' ' && c <= ' ' && asciiSpace(c):
			return false
		}
		prev = c
	}
	return prev != ' ' || s == ""
}

// asciiSpace is unicode.IsSpace for an ASCII byte.
func asciiSpace(c byte) bool {
	return c == ' ' || ('\t' <= c && c <= '\r')
}

// cost is the iteration's cost as its line records it; a line from before
// ralph priced iterations has no source, and its cost was reported.
func (p viewIterationFinished) cost() runfiles.IterationCost {
	source := p.CostSource
	if source == "" {
		source = runfiles.CostReported
	}
	return runfiles.IterationCost{USD: p.CostUSD, Source: source}
}

// EventText is an event's payload as people read it, the one rendering of
// every view that lists events (`ralph events`, `ralph status`, `ralph
// watch`, ralph serve's page): ralph's own lines of a loop's log as
// sentences, an autopilot's log's (autopilot) in the words `ralph
// autopilot` prints, anything else as its text.
func EventText(ev events.Event, autopilot bool) string {
	return (&EventPrinter{Autopilot: autopilot}).describe(ev)
}

package events

import "strings"

// Tag is one <event> tag found in an agent's text. ParseTags does not check
// Topic or Target: the caller runs ValidateTopic and Router.HasHat and tells the
// agent what was wrong.
type Tag struct {
	Topic   string
	Target  string // empty when the tag has no target attribute
	Payload string
}

const (
	tagOpen  = "<event"
	tagClose = "</event>"
	// maxOpenTagLen bounds how far an opening tag may run. Real tags are
	// short; without a bound, text full of stray `<event a="` fragments
	// would make each one scan to the end of the text.
	maxOpenTagLen = 4096
)

// ParseTags returns the <event> tags in text, in order. See the package
// documentation for the syntax. Tags inside fenced code blocks are examples
// and are skipped; tags without a topic, unterminated tags and anything that
// is not a well-formed tag are ignored.
func ParseTags(text string) []Tag {
	s := &tagScanner{text: text, closeFrom: -1}
	for state := scanLineStart; state != nil; {
		state = state(s)
	}
	return s.tags
}

// Event turns t into the event to append: Source is SourceTag, and the
// payload is a JSON string, or null when the tag had none. The caller sets
// TS, Iteration and Hat.
func (t Tag) Event() Event {
	ev := Event{Topic: t.Topic, Target: t.Target, Source: SourceTag}
	if t.Payload != "" {
		ev.Payload = StringPayload(t.Payload)
	}
	return ev
}

// Render writes t as a canonical tag: double quotes (single quotes for a
// value holding '"'), target only when set, and the payload on its own lines
// when it spans lines or starts with whitespace, so that the payload trimming
// rule gives it back unchanged. ParseTags(t.Render()) returns t for every t
// ParseTags produced. A hand-made Tag round-trips when its topic and target
// have no surrounding whitespace, are well under 4 KiB and do not hold both
// quote characters, and its payload does not start with a blank line, does
// not end in whitespace, and holds neither "<event" nor "</event>".
func (t Tag) Render() string {
	var b strings.Builder
	b.WriteString(tagOpen + " topic=")
	writeAttrValue(&b, t.Topic)
	if t.Target != "" {
		b.WriteString(" target=")
		writeAttrValue(&b, t.Target)
	}
	b.WriteByte('>')
	if needsBlockForm(t.Payload) {
		b.WriteString("\n" + t.Payload + "\n")
	} else {
		b.WriteString(t.Payload)
	}
	b.WriteString(tagClose)
	return b.String()
}

func writeAttrValue(b *strings.Builder, v string) {
	q := byte('"')
	if strings.IndexByte(v, '"') >= 0 {
		q = '\''
	}
	b.WriteByte(q)
	b.WriteString(v)
	b.WriteByte(q)
}

// needsBlockForm reports whether a payload would lose its leading whitespace
// or read badly if written on the tag's own line.
func needsBlockForm(payload string) bool {
	return payload != "" && (strings.IndexByte(payload, '\n') >= 0 || isSpace(payload[0]))
}

// trimPayload applies the payload rule to the text between the tags.
//
// Content on the line of the opening tag loses its leading whitespace. If
// that line holds nothing more, the payload starts on the first non-blank
// line after it and keeps that line's indentation (it may be code). Trailing
// whitespace and blank lines are removed. Everything between is exact.
func trimPayload(p string) string {
	if first, rest, ok := strings.Cut(p, "\n"); ok && isBlank(first) {
		p = rest
		for {
			line, rest, ok := strings.Cut(p, "\n")
			if !ok || !isBlank(line) {
				break
			}
			p = rest
		}
	} else {
		p = strings.TrimLeft(p, spaceChars)
	}
	return strings.TrimRight(p, spaceChars+"\n")
}

// spaceChars is the whitespace within a line for the tag syntax. Other
// Unicode spaces are payload content.
const spaceChars = " \t\r"

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func isBlank(line string) bool { return strings.TrimLeft(line, spaceChars) == "" }

// tagScanner holds the state of one ParseTags call. It is driven by stateFn
// functions, each of which consumes some text and names the next state, in
// the style of text/template/parse's lexer.
type tagScanner struct {
	text  string
	pos   int // where scanning continues
	tags  []Tag
	fence codeFence // the fence of the code block being skipped
	// closeAt caches the first "</event>" at or after closeFrom (-1: none),
	// so that many unterminated tags do not each search the rest of the text.
	closeAt, closeFrom int
}

type stateFn func(*tagScanner) stateFn

// lineEnd is the index of the newline ending the line at pos, or len(text).
func (s *tagScanner) lineEnd() int {
	if i := strings.IndexByte(s.text[s.pos:], '\n'); i >= 0 {
		return s.pos + i
	}
	return len(s.text)
}

// nextLine moves to the start of the next line and reports whether there is
// one.
func (s *tagScanner) nextLine() bool {
	end := s.lineEnd()
	if end >= len(s.text) {
		s.pos = len(s.text)
		return false
	}
	s.pos = end + 1
	return true
}

// scanLineStart is at the start of a line, where a code fence may open.
func scanLineStart(s *tagScanner) stateFn {
	if s.pos >= len(s.text) {
		return nil
	}
	if f, ok := parseFenceOpen(s.text[s.pos:s.lineEnd()]); ok {
		s.fence = f
		if !s.nextLine() {
			return nil
		}
		return scanFenced
	}
	return scanText
}

// scanFenced skips the lines of a code block up to and including its closing
// fence. A block that is never closed runs to the end of the text, as in
// CommonMark.
func scanFenced(s *tagScanner) stateFn {
	for {
		closed := s.fence.closedBy(s.text[s.pos:s.lineEnd()])
		if !s.nextLine() {
			return nil
		}
		if closed {
			return scanLineStart
		}
	}
}

// scanText looks for a tag in the rest of the current line.
func scanText(s *tagScanner) stateFn {
	end := s.lineEnd()
	if i := strings.Index(s.text[s.pos:end], tagOpen); i >= 0 {
		s.pos += i
		return scanTag
	}
	if !s.nextLine() {
		return nil
	}
	return scanLineStart
}

// scanTag is at "<event". A complete tag is consumed whole, even if it has no
// topic, so that its payload is never mistaken for markdown; anything else
// is skipped as text.
func scanTag(s *tagScanner) stateFn {
	open, ok := parseOpenTag(s.text, s.pos)
	if !ok {
		return s.skipTagStart()
	}
	if open.selfClosing {
		s.emit(open, "")
		s.pos = open.end
		return scanText
	}
	closeAt := s.nextClose(open.end)
	// An opening tag before the close means this tag was never closed: the
	// later tag is the one the close belongs to.
	if closeAt < 0 || containsOpenTag(s.text, open.end, closeAt) {
		return s.skipTagStart()
	}
	s.emit(open, trimPayload(s.text[open.end:closeAt]))
	s.pos = closeAt + len(tagClose)
	return scanText
}

func (s *tagScanner) skipTagStart() stateFn {
	s.pos += len(tagOpen)
	return scanText
}

func (s *tagScanner) emit(open openTag, payload string) {
	if open.topic != "" {
		s.tags = append(s.tags, Tag{Topic: open.topic, Target: open.target, Payload: payload})
	}
}

// nextClose returns the index of the first "</event>" at or after from, or -1.
func (s *tagScanner) nextClose(from int) int {
	if s.closeFrom >= 0 && from >= s.closeFrom && (s.closeAt < 0 || s.closeAt >= from) {
		return s.closeAt
	}
	s.closeFrom = from
	s.closeAt = strings.Index(s.text[from:], tagClose)
	if s.closeAt >= 0 {
		s.closeAt += from
	}
	return s.closeAt
}

// containsOpenTag reports whether a well-formed opening tag starts in
// text[from:to].
func containsOpenTag(text string, from, to int) bool {
	for from < to {
		i := strings.Index(text[from:to], tagOpen)
		if i < 0 {
			return false
		}
		if _, ok := parseOpenTag(text, from+i); ok {
			return true
		}
		from += i + 1
	}
	return false
}

// openTag is a parsed opening tag.
type openTag struct {
	topic, target       string
	hasTopic, hasTarget bool // whether the attribute was seen, so the first counts
	end                 int  // index just past '>'
	selfClosing         bool
}

// parseOpenTag parses the opening tag that starts at text[at:], which begins
// with "<event": attributes with single- or double-quoted values, in any
// order, with any whitespace (newlines too) around them and around '=',
// ending in '>' or "/>". Unknown attributes are ignored; of a repeated one,
// the first counts.
func parseOpenTag(text string, at int) (openTag, bool) {
	limit := min(len(text), at+maxOpenTagLen)
	i := at + len(tagOpen)
	if i >= limit || !(isTagSpace(text[i]) || text[i] == '>' || text[i] == '/') {
		return openTag{}, false // "<events>", "<event-x", …
	}
	var tag openTag
	for {
		i = skipTagSpace(text, i, limit)
		if i >= limit {
			return openTag{}, false
		}
		switch {
		case text[i] == '>':
			tag.end = i + 1
			return tag, true
		case strings.HasPrefix(text[i:limit], "/>"):
			tag.end, tag.selfClosing = i+2, true
			return tag, true
		}
		name, value, next, ok := parseAttr(text, i, limit)
		if !ok {
			return openTag{}, false
		}
		tag.set(name, strings.TrimSpace(value))
		i = next
	}
}

func (t *openTag) set(name, value string) {
	switch {
	case name == "topic" && !t.hasTopic:
		t.topic, t.hasTopic = value, true
	case name == "target" && !t.hasTarget:
		t.target, t.hasTarget = value, true
	}
}

// parseAttr parses name = "value" at text[i:limit] and returns the index
// after the closing quote.
func parseAttr(text string, i, limit int) (name, value string, next int, ok bool) {
	start := i
	for i < limit && isAttrNameByte(text[i], i == start) {
		i++
	}
	if i == start {
		return "", "", 0, false
	}
	name = text[start:i]
	i = skipTagSpace(text, i, limit)
	if i >= limit || text[i] != '=' {
		return "", "", 0, false
	}
	i = skipTagSpace(text, i+1, limit)
	if i >= limit || (text[i] != '"' && text[i] != '\'') {
		return "", "", 0, false
	}
	quote := text[i]
	n := strings.IndexByte(text[i+1:limit], quote)
	if n < 0 {
		return "", "", 0, false
	}
	return name, text[i+1 : i+1+n], i + n + 2, true
}

func isAttrNameByte(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		return true
	case '0' <= c && c <= '9', c == '-', c == '.', c == ':':
		return !first
	}
	return false
}

func isTagSpace(c byte) bool { return isSpace(c) || c == '\n' }

func skipTagSpace(text string, i, limit int) int {
	for i < limit && isTagSpace(text[i]) {
		i++
	}
	return i
}

// codeFence is the opening fence of a fenced code block: ``` or ~~~ (or
// longer).
type codeFence struct {
	char byte // '`' or '~'
	n    int  // how many
}

// parseFenceOpen reports whether line opens a code block. Unlike CommonMark,
// any indentation is accepted: agents nest fences in list items, where
// deeper indentation is still a fence.
func parseFenceOpen(line string) (codeFence, bool) {
	s := strings.TrimLeft(line, " \t")
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return codeFence{}, false
	}
	f := codeFence{char: s[0], n: countLeading(s, s[0])}
	if f.n < 3 {
		return codeFence{}, false
	}
	// A backtick in the info string makes the line an inline code span
	// (```x``` on one line), not a fence.
	if f.char == '`' && strings.IndexByte(s[f.n:], '`') >= 0 {
		return codeFence{}, false
	}
	return f, true
}

// closedBy reports whether line closes the block: the same fence character,
// at least as many, and nothing after them but whitespace.
func (f codeFence) closedBy(line string) bool {
	s := strings.TrimLeft(line, " \t")
	n := countLeading(s, f.char)
	return n >= f.n && isBlank(s[n:])
}

func countLeading(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

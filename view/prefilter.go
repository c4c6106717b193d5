package view

import (
	"bytes"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// A linePrefilter is a necessary condition on a log line's bytes, checked
// before the line is decoded: a line that fails it cannot pass the filter it
// was made from, so `ralph events` skips most lines of a large log at the
// speed of a byte search. It never decides that a line is kept: the filter
// does, on the decoded event, so a payload that merely mentions a topic is
// decoded and then left out.
//
// A value the filter looks for (the topic's literal parts, the hat) is in
// the line as it is, unless JSON spells it with escapes: \u for any
// character, \/ for '/'. A line with such an escape is always decoded.
type linePrefilter struct {
	needles [][]byte // each must be in the line
	slash   bool     // a needle has '/', which \/ may spell
}

// prefilter is Keep's necessary condition; nil when every line must be
// decoded: without a filter, a malformed line is shown (or counted), and a
// line's bytes cannot say it is malformed.
func (f EventFilter) prefilter() *linePrefilter {
	if f == (EventFilter{}) {
		return nil
	}
	var p linePrefilter
	// A topic that Match accepts spells the pattern with each * replaced by
	// a segment, so the parts between the *s are in it.
	for _, part := range strings.Split(f.Topic, events.Wildcard) {
		p.add(part)
	}
	// Who's hat is the event's or, for ralph's own lines, the payload's:
	// in the line either way.
	p.add(f.Hat)
	return &p
}

// add makes s a needle if it is one: a string with a quote, a backslash
// or a byte that is not printable ASCII may be spelt in ways a byte
// search would miss, so it is left to the decoded filter.
func (p *linePrefilter) add(s string) {
	if s == "" {
		return
	}
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return
		}
	}
	p.needles = append(p.needles, []byte(s))
	p.slash = p.slash || strings.Contains(s, "/")
}

// mayKeep reports whether the line may pass the filter: false only when it
// certainly does not.
func (p *linePrefilter) mayKeep(line []byte) bool {
	if p == nil {
		return true
	}
	for _, n := range p.needles {
		if !bytes.Contains(line, n) {
			return p.escaped(line)
		}
	}
	return true
}

// mayHoldAny reports whether any of the topics may be in the line.
func (p *linePrefilter) mayHoldAny(line []byte, topics []string) bool {
	for _, t := range topics {
		if bytes.Contains(line, []byte(t)) {
			return true
		}
	}
	return p.escaped(line)
}

// escaped reports whether the line has an escape that could spell a needle.
func (p *linePrefilter) escaped(line []byte) bool {
	return bytes.Contains(line, []byte(`\u`)) || (p != nil && p.slash && bytes.Contains(line, []byte(`\/`)))
}

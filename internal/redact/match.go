package redact

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
)

// keyLen is how many bytes of a form its key is: every form is at least
// this long (MinLength is), so a position with fewer bytes left begins
// none.
const keyLen = 8

// A shorter MinLength would need a shorter key.
var _ [MinLength - keyLen]struct{}

// filterBits sizes the bitmap of keys: 2^16 bits (8 KiB) keep a few
// thousand keys' false hits rare.
const filterBits = 16

// matcher finds the forms of secret values in text.
type matcher struct {
	// patterns are the forms to hide, longest first, so that a value
	// containing another is hidden whole under its own name.
	patterns []pattern
	// filter has the bit of each pattern's key set (see slot), for a
	// quick "no form begins here"; nil when there is no pattern.
	filter *[1 << filterBits / 64]uint64
	// byKey lists the patterns of each key, longest first.
	byKey map[uint64][]int32
	// starts marks the bytes a pattern begins with, and prefixes holds
	// every pattern's first 1 to keyLen-1 bytes: a stream's last bytes,
	// too few for a key, may still begin a form.
	starts   [256]bool
	prefixes map[string]bool
}

type pattern struct {
	value []byte
	mask  []byte // [redacted:NAME]
}

// newMatcher makes the matcher of the forms of secrets' values.
func newMatcher(secrets []secret) matcher {
	m := matcher{byKey: map[uint64][]int32{}, prefixes: map[string]bool{}}
	seen := map[string]bool{}
	for _, s := range secrets {
		mask := []byte(Mask(s.name))
		for _, form := range forms(s.value) {
			if !seen[form] {
				seen[form] = true
				m.patterns = append(m.patterns, pattern{value: []byte(form), mask: mask})
			}
		}
	}
	slices.SortStableFunc(m.patterns, func(a, b pattern) int { return cmp.Compare(len(b.value), len(a.value)) })
	if len(m.patterns) == 0 {
		return m
	}
	m.filter = new([1 << filterBits / 64]uint64)
	for i, p := range m.patterns {
		k := key(p.value, 0)
		m.byKey[k] = append(m.byKey[k], int32(i))
		s := slot(k)
		m.filter[s/64] |= 1 << (s % 64)
		m.starts[p.value[0]] = true
		for n := 1; n < keyLen; n++ {
			m.prefixes[string(p.value[:n])] = true
		}
	}
	return m
}

// key is the keyLen bytes of b at i.
func key(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+keyLen]) }

// slot is k's bit in the filter: a multiplicative hash.
func slot(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> (64 - filterBits) }

// candidates are the patterns that may begin at b[i] (which has at least
// keyLen bytes), longest first; nil for most positions, at the cost of a
// load, a multiplication and a bit test.
func (m *matcher) candidates(b []byte, i int) []int32 {
	k := key(b, i)
	s := slot(k)
	if m.filter[s/64]&(1<<(s%64)) == 0 {
		return nil
	}
	return m.byKey[k]
}

// longestAt returns the longest pattern b[i:] begins with, or nil.
func (m *matcher) longestAt(b []byte, i int) *pattern {
	if len(b)-i < keyLen {
		return nil
	}
	for _, c := range m.candidates(b, i) {
		if bytes.HasPrefix(b[i:], m.patterns[c].value) {
			return &m.patterns[c]
		}
	}
	return nil
}

// mayContinue reports whether b[i:], all of it, is the beginning of a
// pattern longer than it: one that more bytes could complete.
func (m *matcher) mayContinue(b []byte, i int) bool {
	rest := b[i:]
	if len(rest) < keyLen {
		return m.starts[rest[0]] && m.prefixes[string(rest)]
	}
	for _, c := range m.candidates(b, i) {
		p := m.patterns[c].value
		if len(p) > len(rest) && bytes.HasPrefix(p, rest) {
			return true
		}
	}
	return false
}

// next is the first position from i on whose key is in the filter, or
// the first with fewer than keyLen bytes left: the scan's inner loop,
// which costs a few instructions a byte.
func (m *matcher) next(b []byte, i int) int {
	f := m.filter
	for ; i+keyLen <= len(b); i++ {
		s := slot(binary.LittleEndian.Uint64(b[i : i+keyLen]))
		if f[s/64]&(1<<(s%64)) != 0 {
			return i
		}
	}
	return i
}

// first is where the first pattern in b begins, or -1: the quick test
// that b holds no secret at all, the common case.
func (m *matcher) first(b []byte) int {
	for i := m.next(b, 0); i+keyLen <= len(b); i = m.next(b, i+1) {
		if m.longestAt(b, i) != nil {
			return i
		}
	}
	return -1
}

// redactFrom is b with every pattern replaced, knowing that none begins
// before at.
func (m *matcher) redactFrom(b []byte, at int) []byte {
	out := make([]byte, 0, len(b))
	out = append(out, b[:at]...)
	out, _ = m.scan(out, b[at:], true)
	return out
}

// scan appends the redacted form of buf to dst. Unless final, it stops at
// the first byte that may begin a value continuing past the end of buf,
// and returns how many bytes it left there for the next call.
func (m *matcher) scan(dst, buf []byte, final bool) ([]byte, int) {
	copied := 0
	for i := 0; i < len(buf); i++ {
		if i = m.next(buf, i); len(buf)-i >= keyLen {
			if m.candidates(buf, i) == nil {
				continue // a false hit of the filter
			}
		} else if final {
			break // too few bytes left for any pattern
		} else if !m.mayContinue(buf, i) {
			continue
		}
		end, p, open := m.span(buf, i, final)
		switch {
		case open:
			return append(dst, buf[copied:i]...), len(buf) - i
		case p != nil:
			dst = append(dst, buf[copied:i]...)
			dst = append(dst, p.mask...)
			copied = end
			i = end - 1
		}
	}
	return append(dst, buf[copied:]...), 0
}

// span finds the value at buf[i]: the longest one that matches there,
// stretched over any value that starts inside it and ends past it, so that
// overlapping values are hidden whole. open says the answer depends on
// bytes not seen yet (only when not final).
func (m *matcher) span(buf []byte, i int, final bool) (end int, p *pattern, open bool) {
	if !final && m.mayContinue(buf, i) {
		return 0, nil, true
	}
	if p = m.longestAt(buf, i); p == nil {
		return 0, nil, false
	}
	end = i + len(p.value)
	for k := i + 1; k < end; k++ {
		if !final && m.mayContinue(buf, k) {
			return 0, nil, true
		}
		if q := m.longestAt(buf, k); q != nil && k+len(q.value) > end {
			end = k + len(q.value)
		}
	}
	return end, p, false
}

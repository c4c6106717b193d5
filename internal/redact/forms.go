package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// forms lists the ways value can appear in output, each at least keyLen
// bytes long: as it is and encoded (see encodings), and each of those as
// JSON escapes it inside a string, once or twice (see jsonForms). A value
// of several lines is also hidden line by line, so that a private key
// printed in part is still hidden.
func forms(value string) []string {
	pieces := []string{value}
	if strings.ContainsAny(value, "\r\n") {
		for _, line := range strings.FieldsFunc(value, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line = strings.TrimSpace(line); len(line) >= MinLength {
				pieces = append(pieces, line)
			}
		}
	}
	var out []string
	for _, p := range pieces {
		for _, enc := range encodings(p) {
			for _, f := range jsonForms(enc) {
				if len(f) >= keyLen {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// encodings are s as it is and as programs commonly encode it: percent
// (URL) encoding, hex, and base64 (standard and URL alphabets).
func encodings(s string) []string {
	out := []string{s}
	for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		out = append(out, e, lowerPercent(e))
	}
	h := hex.EncodeToString([]byte(s))
	out = append(out, h, strings.ToUpper(h))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, base64Forms(enc, []byte(s))...)
	}
	return out
}

// lowerPercent is percent-encoded text with its escapes in lower case
// (%2f rather than %2F), as some encoders write them.
func lowerPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// base64Forms are the ways v appears in enc's base64: encoded alone
// (padded and not), and inside a longer encoded text (an Authorization:
// Basic header encodes user:password), where what v's bytes become
// depends on where they fall in a 3-byte group. For each of the three
// places, the form is the characters that v's bytes alone decide.
func base64Forms(enc *base64.Encoding, v []byte) []string {
	raw := enc.WithPadding(base64.NoPadding)
	out := []string{enc.EncodeToString(v), raw.EncodeToString(v)}
	for lead := range 3 {
		text := raw.EncodeToString(append(make([]byte, lead), v...))
		first := (8*lead + 5) / 6       // the first character with no bit of the lead
		last := 8 * (lead + len(v)) / 6 // past the last character with no bit of what follows
		if last-first >= keyLen {
			out = append(out, text[first:last])
		}
	}
	return out
}

// jsonForms are s and s as JSON encoders write it inside a string, with
// or without each of the escapes they add: HTML escaping (Go's <, > and &
// as \u003c…), / as \/ (PHP), everything past ASCII as \u escapes
// (Python's ensure_ascii, PHP); and each of those escaped once more, as
// JSON text inside a JSON string (a tool's JSON output in an agent's JSON
// line) has it.
func jsonForms(s string) []string {
	if !needsEscape(s) {
		return []string{s}
	}
	var once []string
	for _, html := range []bool{false, true} {
		for _, slash := range []bool{false, true} {
			for _, ascii := range []bool{false, true} {
				once = append(once, jsonEscape(s, escaping{html: html, slash: slash, ascii: ascii}))
			}
		}
	}
	out := append([]string{s}, once...)
	for _, e := range once {
		if e != s {
			out = append(out, jsonEscape(e, escaping{}), jsonEscape(e, escaping{slash: true}))
		}
	}
	return out
}

// escaping is how a JSON encoder escapes a string beyond what it must.
type escaping struct {
	html  bool // <, >, & as \u003c, \u003e, \u0026
	slash bool // / as \/
	ascii bool // every rune past ASCII as \uXXXX (surrogate pairs past the BMP)
}

// jsonEscape is s as it appears between the quotes of a JSON string that
// an encoder escaping as o wrote.
func jsonEscape(s string, o escaping) string {
	if !needsEscape(s) {
		return s // most keys and tokens: every encoder writes them as they are
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case o.html && (r == '<' || r == '>' || r == '&'):
			fmt.Fprintf(&b, `\u%04x`, r)
		case o.slash && r == '/':
			b.WriteString(`\/`)
		case r == '\u2028' || r == '\u2029' || (o.ascii && r >= utf8.RuneSelf):
			writeUnicodeEscape(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsEscape reports whether some encoder escapes a byte of s.
func needsEscape(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || strings.IndexByte(`"\/<>&`, c) >= 0 {
			return true
		}
	}
	return false
}

// writeUnicodeEscape writes r as \uXXXX, or as a surrogate pair past the
// Basic Multilingual Plane.
func writeUnicodeEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		r -= 0x10000
		fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

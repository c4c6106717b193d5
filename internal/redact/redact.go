// Package redact hides the values of secret environment variables in what
// ralph writes: an agent that prints its environment, or an API error that
// echoes a key, must not put the key into .ralph/, the --headless stream or
// the terminal.
//
// # Which variables
//
// A [Redactor] is built from the environment ralph passes to agents. The
// value of a variable is hidden when its name looks secret ([IsSecretName]:
// it has KEY, TOKEN, SECRET or PASSWORD as a word, or as the end of one) or
// when the name is listed explicitly (ralph.yml's redact: key), and the
// value is at least [MinLength] bytes long. Every occurrence becomes
// [redacted:NAME].
//
// # What counts as an occurrence
//
// The value as it is, and the value as a JSON encoder writes it inside a
// string (quotes, backslashes and control characters escaped; with and
// without HTML escaping), since most agents print JSON lines. A value of
// several lines is also hidden line by line, so that a private key printed
// in part is still hidden. Where values overlap, the longest one that
// starts first is named and the whole overlapping run is hidden.
//
// # Streams
//
// [Writer] redacts a stream whose values may be split across writes. It
// holds back only the bytes at the end of a write that could begin a
// value, so text that cannot be part of one (a line ending in a newline,
// say) goes through at once, and it writes what it holds on Close.
//
// Redacting bytes of JSON text may, for a value that holds a backslash or
// that starts right after an escaped character, leave a line that is no
// longer valid JSON. A broken debugging line is the lesser harm than a
// leaked key; [Redactor.JSON] avoids it for JSON values ralph writes itself.
package redact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// MinLength is the shortest value that is redacted. Shorter values of
// secret-looking variables are flags, ports, booleans or placeholders
// ("1", "true", "none", "8080"): hiding every occurrence of them would
// garble the output while protecting nothing, and a real key or token is
// far longer. Eight bytes still covers a short password.
const MinLength = 8

// markers are the words that make a variable's name look secret.
var markers = []string{"KEY", "TOKEN", "SECRET", "PASSWORD"}

// IsSecretName reports whether an environment variable's name says its
// value is secret: one of KEY, TOKEN, SECRET or PASSWORD (in any case) ends
// a word of the name. Words are split at anything but a letter, and at a
// lower-to-upper case change; a plural s still ends the word. So API_KEY,
// ANTHROPIC_API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY,
// AWS_ACCESS_KEY_ID, PGPASSWORD, OPENAI_APIKEY, npm_config_authToken,
// SSH_KEYS and KEY2 are secret, while a marker that only begins a longer
// word is not: KEYBOARD, KEYCHAIN, XKB_KEYMAP, TOKENIZERS_PARALLELISM.
//
// A word that merely ends in a marker (MONKEY) counts too: such names are
// rare, and hiding a harmless value costs less than showing a secret one.
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range markers {
		for from := 0; ; {
			i := strings.Index(upper[from:], m)
			if i < 0 {
				break
			}
			end := from + i + len(m)
			if endsWord(name, end) {
				return true
			}
			from += i + 1
		}
	}
	return false
}

// endsWord reports whether the word that runs up to name[:end] ends there,
// allowing one plural s.
func endsWord(name string, end int) bool {
	if wordBreak(name, end) {
		return true
	}
	if name[end] == 's' || name[end] == 'S' {
		return wordBreak(name, end+1)
	}
	return false
}

// wordBreak reports whether a word ends between name[i-1] and name[i].
func wordBreak(name string, i int) bool {
	if i >= len(name) || !isLetter(name[i]) {
		return true
	}
	return isLower(name[i-1]) && isUpper(name[i])
}

func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLetter(c byte) bool { return isLower(c) || isUpper(c) }

// Redactor replaces secret values with [redacted:NAME]. It is immutable and
// safe for concurrent use; a nil *Redactor redacts nothing.
type Redactor struct {
	// patterns are the byte strings to hide, longest first, so that a
	// value containing another is hidden whole under its own name.
	patterns []pattern
	// starts marks the bytes a pattern begins with, to skip the rest fast.
	starts [256]bool
	names  []string
	short  []string
}

type pattern struct {
	value []byte
	mask  []byte // [redacted:NAME]
}

// New builds a Redactor from env, KEY=VALUE entries, hiding the values of
// the variables whose names look secret and of those listed in names. A
// name given twice has both its values hidden: env is usually the union of
// several environments (ralph's own, each backend's env:), and a value one
// agent does not see is still a secret of the user's.
func New(env []string, names []string) *Redactor {
	vars := allValues(env)
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}
	r := &Redactor{}
	masked := map[string]bool{}
	// Sorted, so that a value shared by two variables always gets the
	// same name.
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !listed[name] && !IsSecretName(name) {
			continue
		}
		hidden, short := false, false
		mask := []byte("[redacted:" + name + "]")
		for _, value := range vars[name] {
			if len(value) < MinLength {
				short = short || value != ""
				continue
			}
			hidden = true
			for _, form := range forms(value) {
				if !masked[form] {
					masked[form] = true
					r.patterns = append(r.patterns, pattern{value: []byte(form), mask: mask})
				}
			}
		}
		switch {
		case hidden:
			r.names = append(r.names, name)
		case short && listed[name]:
			r.short = append(r.short, name)
		}
	}
	slices.SortStableFunc(r.patterns, func(a, b pattern) int { return cmp.Compare(len(b.value), len(a.value)) })
	for _, p := range r.patterns {
		r.starts[p.value[0]] = true
	}
	return r
}

// allValues maps each name in env to its distinct values, in order.
func allValues(env []string) map[string][]string {
	vars := map[string][]string{}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" && !slices.Contains(vars[name], value) {
			vars[name] = append(vars[name], value)
		}
	}
	return vars
}

// forms lists the ways value can appear in output: as it is, JSON-escaped,
// and each long-enough line of a value of several lines, likewise.
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
		out = append(out, p, jsonEscaped(p, false), jsonEscaped(p, true))
	}
	return out
}

// jsonEscaped is s as it appears between the quotes of a JSON string.
func jsonEscaped(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// Names lists the variables whose values are hidden, sorted.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.names)
}

// TooShort lists the variables named explicitly (New's names) whose values
// are set but shorter than MinLength, and so are not hidden: worth a
// warning, since someone asked for them.
func (r *Redactor) TooShort() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.short)
}

// Empty reports whether there is nothing to hide.
func (r *Redactor) Empty() bool { return r == nil || len(r.patterns) == 0 }

// String returns s with every secret value replaced.
func (r *Redactor) String(s string) string {
	if r.Empty() || !r.mayContain([]byte(s)) {
		return s
	}
	out, _ := r.scan(nil, []byte(s), true)
	return string(out)
}

// Bytes returns b with every secret value replaced. It returns b itself
// when there is nothing to replace.
func (r *Redactor) Bytes(b []byte) []byte {
	if r.Empty() || !r.mayContain(b) {
		return b
	}
	out, _ := r.scan(nil, b, true)
	return out
}

// mayContain is a quick test that b holds no secret at all, the common case.
func (r *Redactor) mayContain(b []byte) bool {
	for _, p := range r.patterns {
		if bytes.Contains(b, p.value) {
			return true
		}
	}
	return false
}

// scan appends the redacted form of buf to dst. Unless final, it stops at
// the first byte that may begin a value continuing past the end of buf,
// and returns how many bytes it left there for the next call.
func (r *Redactor) scan(dst, buf []byte, final bool) ([]byte, int) {
	copied := 0
	for i := 0; i < len(buf); {
		if !r.starts[buf[i]] {
			i++
			continue
		}
		end, p, open := r.span(buf, i, final)
		switch {
		case open:
			return append(dst, buf[copied:i]...), len(buf) - i
		case p == nil:
			i++
		default:
			dst = append(dst, buf[copied:i]...)
			dst = append(dst, p.mask...)
			i, copied = end, end
		}
	}
	return append(dst, buf[copied:]...), 0
}

// span finds the value at buf[i]: the longest one that matches there,
// stretched over any value that starts inside it and ends past it, so that
// overlapping values are hidden whole. open says the answer depends on
// bytes not seen yet (only when not final).
func (r *Redactor) span(buf []byte, i int, final bool) (end int, p *pattern, open bool) {
	if !final && r.mayContinue(buf[i:]) {
		return 0, nil, true
	}
	if p = r.longestAt(buf[i:]); p == nil {
		return 0, nil, false
	}
	end = i + len(p.value)
	for k := i + 1; k < end; k++ {
		if !r.starts[buf[k]] {
			continue
		}
		if !final && r.mayContinue(buf[k:]) {
			return 0, nil, true
		}
		if q := r.longestAt(buf[k:]); q != nil && k+len(q.value) > end {
			end = k + len(q.value)
		}
	}
	return end, p, false
}

// longestAt returns the longest pattern b begins with, or nil.
func (r *Redactor) longestAt(b []byte) *pattern {
	for i := range r.patterns {
		if bytes.HasPrefix(b, r.patterns[i].value) {
			return &r.patterns[i]
		}
	}
	return nil
}

// mayContinue reports whether b, all of it, is the beginning of a pattern
// longer than b: one that more bytes could complete.
func (r *Redactor) mayContinue(b []byte) bool {
	for _, p := range r.patterns {
		if len(p.value) <= len(b) {
			return false // sorted longest first: no longer pattern is left
		}
		if bytes.HasPrefix(p.value, b) {
			return true
		}
	}
	return false
}

// JSON returns the JSON value raw with every secret value replaced inside
// its strings (object keys included), so that the result is still valid
// JSON. A number that is a secret (a numeric PIN) becomes a string. raw is
// returned as it is when it holds no secret; when it does, the value is
// decoded and encoded again, which sorts the keys of its objects. Text
// that is not JSON is redacted as bytes.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if r.Empty() || !r.mayContain(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return r.Bytes(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.value(v)); err != nil {
		return r.Bytes(raw)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// value redacts the strings of a decoded JSON value.
func (r *Redactor) value(v any) any {
	switch v := v.(type) {
	case string:
		return r.String(v)
	case json.Number:
		if s := r.String(v.String()); s != v.String() {
			return s
		}
		return v
	case []any:
		for i := range v {
			v[i] = r.value(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[r.String(k)] = r.value(x)
		}
		return out
	}
	return v
}

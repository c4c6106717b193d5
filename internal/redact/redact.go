// Package redact hides the values of secret environment variables in what
// ralph writes: an agent that prints its environment, or an API error that
// echoes a key, must not put the key into .ralph/, the --headless stream or
// the terminal.
//
// # Which variables
//
// A [Redactor] is built from the environment ralph passes to agents. The
// value of a variable is hidden when its name looks secret ([IsSecretName]:
// it has KEY, TOKEN, SECRET, PASSWORD, PASSPHRASE or PASSWD as a word, or
// as the end of one, or ends in the word PWD, PAT or PASS), when the name
// is listed explicitly (ralph.yml's redact: key), or when the value is a
// URL with a password (DATABASE_URL): then the URL and the password on its
// own. A value shorter than [MinLength] bytes is left alone. Every
// occurrence becomes [redacted:NAME].
//
// # What counts as an occurrence
//
// The value as it is, and as programs encode it: percent-encoded (URL
// query and path escaping, upper- or lower-case hex), as hex, and as base64
// (standard and URL alphabets, alone or inside a longer encoded text such
// as a Basic authorization header); and each of those as a JSON encoder
// writes it inside a string (quotes, backslashes and control characters
// escaped; with and without HTML escaping, with / as \/, with non-ASCII as
// \u escapes), once or twice over, since most agents print JSON lines and
// tools print JSON inside them. A value of several lines is also hidden
// line by line, so that a private key printed in part is still hidden.
// Where values overlap, the longest one that starts first is named and the
// whole overlapping run is hidden.
//
// # Cost
//
// Every form of every value is computed once, when the Redactor is made.
// Text is then scanned once, whatever the number of forms: each position's
// next 8 bytes are looked up in a bitmap of the forms' first 8 bytes, and
// only a hit is compared with the forms that begin with them.
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

// Redactor replaces secret values with [redacted:NAME]. It is immutable and
// safe for concurrent use; a nil *Redactor redacts nothing.
type Redactor struct {
	m     matcher
	names []string
	short []string
}

// New builds a Redactor from env, KEY=VALUE entries, hiding the values of
// the variables whose names look secret ([IsSecretName]), of those listed
// in names, and of any whose value is a URL with a password in it (the
// whole URL, and the password on its own). A name given twice has both
// its values hidden: env is usually the union of several environments
// (ralph's own, each backend's env:), and a value one agent does not see
// is still a secret of the user's.
func New(env []string, names []string) *Redactor {
	vars := allValues(env)
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}
	r := &Redactor{}
	var secrets []secret
	// Sorted, so that a value shared by two variables always gets the
	// same name.
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		named := listed[name] || IsSecretName(name)
		hidden, short := false, false
		for _, value := range vars[name] {
			values := passwordOf(value)
			if named || len(values) > 0 {
				values = append(values, value)
			}
			for _, v := range values {
				if len(v) < MinLength {
					short = short || v != ""
					continue
				}
				hidden = true
				secrets = append(secrets, secret{name: name, value: v})
			}
		}
		switch {
		case hidden:
			r.names = append(r.names, name)
		case short && listed[name]:
			r.short = append(r.short, name)
		}
	}
	r.m = newMatcher(secrets)
	return r
}

// secret is one value to hide, and the variable it is named after.
type secret struct{ name, value string }

// passwordOf is the password of a value that is a URL with one, as the
// value spells it and decoded: a connection string's password is printed
// on its own too (a client's error, a PGPASSWORD it was copied into).
func passwordOf(value string) []string {
	raw, decoded := urlPassword(value)
	switch raw {
	case "":
		return nil
	case decoded:
		return []string{raw}
	}
	return []string{raw, decoded}
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
func (r *Redactor) Empty() bool { return r == nil || len(r.m.patterns) == 0 }

// String returns s with every secret value replaced.
func (r *Redactor) String(s string) string {
	if r.Empty() || len(s) < keyLen {
		return s
	}
	b := []byte(s)
	at := r.m.first(b)
	if at < 0 {
		return s
	}
	return string(r.m.redactFrom(b, at))
}

// Bytes returns b with every secret value replaced. It returns b itself
// when there is nothing to replace.
func (r *Redactor) Bytes(b []byte) []byte {
	out, _ := r.bytes(b)
	return out
}

// bytes is Bytes, and whether it replaced anything.
func (r *Redactor) bytes(b []byte) ([]byte, bool) {
	if r.Empty() {
		return b, false
	}
	at := r.m.first(b)
	if at < 0 {
		return b, false
	}
	return r.m.redactFrom(b, at), true
}

// Line returns a line of JSON (an event log's, say) with every secret
// value replaced, still valid JSON when it was: the values are replaced in
// place, which keeps the line's layout and key order, unless that breaks
// it (a value that starts right after an escaped character), when the line
// is redacted as JSON (see JSON). A line that is not JSON is redacted as
// bytes. It returns line itself when there is nothing to replace.
func (r *Redactor) Line(line []byte) []byte {
	out, changed := r.bytes(line)
	if !changed || json.Valid(out) || !json.Valid(line) {
		return out
	}
	return r.JSON(line)
}

// JSON returns the JSON value raw with every secret value replaced inside
// its strings (object keys included), so that the result is still valid
// JSON. A number that is a secret (a numeric PIN) becomes a string. raw is
// returned as it is when it holds no secret; when it does, the value is
// decoded and encoded again, which sorts the keys of its objects. Text
// that is not JSON is redacted as bytes.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if r.Empty() || r.m.first(raw) < 0 {
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

package backends

// Helpers shared by the parsers and verdicts of every CLI: the JSON-lines
// ones (claude, codex, gemini, opencode, pi, qwen, copilot) and the
// plain-text ones (kiro, amp, cursor, command). A parser is a parseFunc
// (cli.go); a JSON-lines one reads with forEachJSONLine and decodeJSONLine
// and reports a failure found in the output through cliFailure.
//
// # Line policy
//
// Agent CLIs print one JSON object per line, but a line can be megabytes (a
// tool result that holds a whole file), so lines are read with a
// bufio.Reader and no length limit. Lines that are not JSON objects (banners,
// warnings some CLIs print on stdout) are skipped, and so are lines that do
// not decode (a final line cut off when the process was killed): parse never
// fails on a line it does not understand, and the raw output is kept in the
// run folder for anyone who needs to look.
//
// # Usage
//
// Usage.InputTokens counts input tokens not read from a cache; where a CLI's
// own input figure includes cached tokens (the OpenAI and Gemini conventions,
// used by codex and gemini) the cached part is moved to CacheReadTokens.
// ActivityUsage carries increments: the usages a parser reports add up to the
// AgentResult's Usage.
//
// # Failures
//
// Error messages an agent prints are classified by failureKind: an HTTP 429
// or words such as "rate limit", "quota", "usage limit" mean
// events.FailureRateLimit (with the reset time when the message gives one,
// see resetAtIn); 401, 403, "invalid api key", "not logged in" and the like
// mean events.FailureAuth; anything else is events.FailureAgent.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ralph-loop/ralph/events"
)

// forEachLine calls fn with every line of r, without its line ending,
// however long the line is. A last line without a newline counts too. The
// slice is only valid during the call. It returns the first read error
// other than io.EOF.
func forEachLine(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	// A line longer than the buffer, assembled. Its room is kept for the
	// next one: a session that reads whole files prints many such lines,
	// and assembling each in a new slice allocated twice its size.
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line, long = long, long[:0]
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 || err == nil {
			fn(line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// forEachJSONLine calls fn with every line of r that looks like a JSON
// object, after the policy in the file comment. fn decodes the line itself
// and skips it when it does not decode. Like forEachLine's, the slice is
// only valid during the call.
func forEachJSONLine(r io.Reader, fn func(line []byte)) {
	_ = forEachLine(r, func(line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			return
		}
		fn(line)
	})
}

// decodeJSONLine decodes one JSON object line into v. A field of an
// unexpected type is left zero rather than losing the whole line, because
// CLIs change field types between versions.
//
// It decodes with the v1 API of the module that mirrors encoding/json/v2
// (jsonv1), which keeps encoding/json's rules (names matched without regard
// to case, the last of duplicate names wins, invalid UTF-8 replaced,
// decoding goes on past a field of the wrong type) but reads a line in one
// pass. encoding/json's Unmarshal scans the whole line byte by byte to
// validate it and then again to decode it; that was most of what the codex,
// gemini and opencode parsers cost, and kept them under 200 MB/s even with
// structs that name nothing but the type. FuzzDecodeJSONLine holds the two
// to the same results. The module's README says encoding/json is built on
// v2 by default from Go 1.27 on; from then on encoding/json may be as fast,
// and this dependency can go.
func decodeJSONLine(line []byte, v any) bool {
	err := jsonv1.Unmarshal(line, v)
	var typeErr *jsonv1.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

// forEachJSONObject decodes every JSON object line of r that may be of one
// of types into a fresh T (decodeJSONLine) and calls fn with it; lines that
// do not decode are skipped. It is how every JSON-lines parser reads its
// stream.
func forEachJSONObject[T any](r io.Reader, types lineTypes, fn func(l *T)) {
	forEachJSONLineOf(r, types, func(line []byte) {
		var l T
		if decodeJSONLine(line, &l) {
			fn(&l)
		}
	})
}

// forEachJSONLineOf is forEachJSONLine for the lines that may be of one of
// types, for a parser that chooses how to decode each line.
func forEachJSONLineOf(r io.Reader, types lineTypes, fn func(line []byte)) {
	forEachJSONLine(r, func(line []byte) {
		if skipOtherLineTypes && !types.mayMatch(line) {
			return
		}
		fn(line)
	})
}

// longString is a string field that may hold kilobytes of text: assistant
// text, a result, a command. It decodes like a string field, with one
// allocation where the decoder makes two for a string with escapes (an
// unescaped copy, then the string made of it), and nearly every long text
// has escapes: its newlines.
type longString string

func (s *longString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return err // like a string field, null or another type leaves it as it was
	}
	*s = longString(unquote(v))
	return nil
}

// unquote decodes v, a JSON string the decoder has read, as the decoder
// would, with one allocation.
func unquote(v jsontext.Value) string {
	// The decoder validated v, and AppendUnquote replaces invalid UTF-8 as
	// the decoder does, so its error says nothing new. It wants room for
	// all of v, quotes too. The buffer is new and never written again, so
	// it can be the string's bytes.
	b, _ := jsontext.AppendUnquote(make([]byte, 0, len(v)), v)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// nonEmptyString decodes a JSON string field to whether it is non-empty,
// without building the string: for text that is only counted, past the
// activity budget. Like a string field it is left as it was by null or a
// value of another type. Any string but "" decodes to a non-empty one
// (escapes and invalid UTF-8 decode to at least a rune), so the raw value
// says it.
type nonEmptyString bool

func (s *nonEmptyString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue() // the decoder's own bytes: nothing is copied
	if err != nil {
		return err
	}
	if v.Kind() == '"' {
		*s = len(v) > len(`""`)
	}
	return nil
}

// skipOtherLineTypes is false only while checkLineTypeSkipping (a test
// helper) parses a stream again without skipping, to show that no parser
// acts on a line of a type missing from its lineTypes.
var skipOtherLineTypes = true

// lineTypes are the values of a line's "type" that a parser acts on, each
// as it appears in JSON, quotes included. Every parser switches on the type
// and does nothing for the others, so a line that cannot be of one of them
// need not be decoded: most of a long session's bytes are tool output in
// lines that no parser reads (claude's and qwen's user lines, pi's
// message_update, copilot's tool.execution_complete), and decoding is what
// parsing costs.
type lineTypes [][]byte

// newLineTypes lists the types a parser's switch has a case for; a case
// left out would never run. Only letters, digits, '.', '_' and '-' are
// allowed, which is what makes mayMatch's check sound.
func newLineTypes(types ...string) lineTypes {
	t := make(lineTypes, len(types))
	for i, typ := range types {
		if typ == "" || strings.TrimFunc(typ, plainNameRune) != "" {
			panic("line type " + strconv.Quote(typ) + " needs escaping in JSON")
		}
		t[i] = []byte(`"` + typ + `"`)
	}
	return t
}

func plainNameRune(r rune) bool {
	return r < utf8.RuneSelf && (r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
}

// mayMatch is false only when line cannot decode to an object whose type is
// one of t. A JSON string decodes to a plain name (newLineTypes) only from
// those very bytes between quotes, unless a \u escape spells them: the
// other escapes stand for quotes, backslashes, slashes and control
// characters. And a string followed by a colon is a key, not a value. So
// the type's value, if it is one of t and the line has no \u, is one of t's
// quoted names not followed by a colon. A false true costs only a decode.
func (t lineTypes) mayMatch(line []byte) bool {
	// Every CLI prints the type first: where it is one of t, say so before
	// searching the whole line (several megabytes, perhaps) for each name.
	// The answer is the one the search below would give.
	if rest, ok := bytes.CutPrefix(line, []byte(`{"type":`)); ok {
		for _, quoted := range t {
			if after, ok := bytes.CutPrefix(rest, quoted); ok && !startsWithColon(after) {
				return true
			}
		}
	}
	for _, quoted := range t {
		if hasValue(line, quoted) {
			return true
		}
	}
	// Looked for last: tool output is full of backslashes, and a line of a
	// wanted type usually names it first.
	return bytes.Contains(line, []byte(`\u`))
}

// hasValue reports whether quoted occurs in line other than as a key.
func hasValue(line, quoted []byte) bool {
	for rest := line; ; {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			return false
		}
		rest = rest[i+len(quoted):]
		if !startsWithColon(rest) {
			return true
		}
	}
}

// startsWithColon reports whether b is JSON whitespace and then a colon.
func startsWithColon(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == ':'
}

// toolIDs holds the ids of the tool uses a parser has counted: CLIs mention
// one use in several lines (started, updated, completed).
type toolIDs map[string]bool

// first reports whether the use id is new, and remembers it. A use without
// an id cannot be matched with another line, so it is always new.
func (s toolIDs) first(id string) bool {
	if id == "" {
		return true
	}
	if s[id] {
		return false
	}
	s[id] = true
	return true
}

// singleLine collapses whitespace and cuts s to at most limit runes, so an
// error body of several kilobytes fits in a one-line failure message.
func singleLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}

// maxMessage bounds the agent's own words in a failure message.
const maxMessage = 300

var (
	// statusRe finds an HTTP error status in an error message: "status 429",
	// "last status: 429 Too Many Requests", "[API Error: 400 …",
	// "\"code\":429", "429 Rate limit reached" at the start, "API error (429)".
	statusRe = lazyRegexp(`(?i)(?:\bstatus(?:\s*code)?\s*[:=]?\s*|\bapi error:?\s*\[?|"code"\s*:\s*|\berror code:?\s*|\berror\s*\(|\bhttp/?[\d.]*\s+|^\s*\[?)([45]\d\d)\b`)

	rateLimitRe = lazyRegexp(`(?i)rate[ _-]?limit|too many requests|quota|usage[ _-]limit|resource[ _]exhausted|hit your (?:usage |global )?limit|session limit`)

	authRe = lazyRegexp(`(?i)unauthori[sz]ed|forbidden|permission_denied|invalid[ _-]?api[ _-]?key|incorrect api key|api key (?:not valid|is invalid|not found|missing)|invalid x-api-key|authentication[ _](?:failed|error|required)|not (?:logged|signed) in|not authenticated|please (?:log|sign) ?in|(?:log|sign) ?in again|login required|invalid auth method|(?:access|refresh) token (?:has )?(?:expired|could not be refreshed)|free tier has been discontinued`)
)

// statusIn returns the HTTP error status an error message names, or 0.
func statusIn(msg string) int {
	m := statusRe().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// failureKind classifies an error the agent reported. status is the HTTP
// status when the CLI gives it as a field, 0 when it must be read from msg.
func failureKind(msg string, status int) events.FailureKind {
	if status == 0 {
		status = statusIn(msg)
	}
	switch {
	case status == 429 || rateLimitRe().MatchString(msg):
		return events.FailureRateLimit
	case status == 401 || status == 403 || authRe().MatchString(msg):
		return events.FailureAuth
	default:
		return events.FailureAgent
	}
}

// cliFailure is a failure found in a CLI's output, before it is written into
// an AgentResult.
type cliFailure struct {
	kind    events.FailureKind
	message string // the agent's own words, already one line
	resetAt time.Time
}

// newFailure classifies msg (with status when the CLI reports one) and reads
// the reset time of a rate limit, relative to now.
func newFailure(msg string, status int, now time.Time) *cliFailure {
	f := &cliFailure{kind: failureKind(msg, status), message: singleLine(msg, maxMessage)}
	if f.kind == events.FailureRateLimit {
		f.resetAt = resetAtIn(msg, now)
	}
	return f
}

// apply writes f into res with a message that names the CLI and, for a
// credentials problem, how to fix it; authHint is that fix.
func (f *cliFailure) apply(res *events.AgentResult, cli, authHint string) {
	res.Failure = f.kind
	res.RateLimitResetAt = time.Time{}
	switch f.kind {
	case events.FailureRateLimit:
		res.FailureMessage = fmt.Sprintf("%s hit a rate or usage limit: %s", cli, f.message)
		res.RateLimitResetAt = f.resetAt
	case events.FailureAuth:
		res.FailureMessage = fmt.Sprintf("%s could not authenticate: %s; %s", cli, f.message, authHint)
	default:
		res.FailureMessage = fmt.Sprintf("%s reported an error: %s", cli, f.message)
	}
}

// report sends the activity that goes with a failure: a rate-limit notice or
// an error.
func (f *cliFailure) report(report func(events.Activity)) {
	if f.kind == events.FailureRateLimit {
		report(events.Activity{Kind: events.ActivityRateLimit, Text: f.message, ResetAt: f.resetAt})
		return
	}
	report(events.Activity{Kind: events.ActivityError, Text: f.message})
}

var (
	// resetLeadRe is the lead-in of a relative wait: "try again in",
	// "retry after", "Please retry in", "reset after", "wait".
	resetLeadRe = lazyRegexp(`(?i)\b(?:try again|retry|resets?|wait)(?:\s+(?:in|after))?\s*~?\s*`)
	// resetClockRe is codex's absolute form, in the local time zone:
	// "try again at 3:28 PM." or "try again at Apr 28th, 2026 10:03 PM."
	resetClockRe = lazyRegexp(`(?i)\btry again at (?:([a-z]{3}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2})\s*([ap]m)\b`)
	// resetFieldRe finds reset fields in a JSON error body copied into a
	// message: OpenAI's "resets_at" (Unix seconds), "resets_in_seconds",
	// Google's RetryInfo "retryDelay":"43s", "retry_after":30.
	resetFieldRe = lazyRegexp(`"(resets_at|resets_in_seconds|retryDelay|retry_after|retry_after_seconds)"\s*:\s*"?([\d.]+)(m?s)?"?`)
)

// resetAtIn reads when a rate limit lifts from an error message, relative
// to now (the moment the message was read), or returns the zero time. It
// knows the shapes the CLIs print:
//
//   - codex: "… or try again at 3:28 PM." / "… try again at Apr 28th, 2026
//     10:03 PM." (local time), older "try again in 2 days 17 hours 14
//     minutes", model capacity "Try again in 5m."
//   - gemini: "Please retry in 43.5s", "Suggested retry after 60s.",
//     "Your quota will reset after 12h22m45s."
//   - pi: "Try again in ~91 min."
//   - copilot: "Please try again in 2 hours.", "Please retry after 2733
//     seconds.", "wait 6 seconds"
//   - OpenAI bodies: "Please try again in 1.2s", "resets_at":1777936568,
//     "resets_in_seconds":13872
func resetAtIn(msg string, now time.Time) time.Time {
	if m := resetClockRe().FindStringSubmatch(msg); m != nil {
		if t, ok := clockTime(m, now); ok {
			return t
		}
	}
	for _, loc := range resetLeadRe().FindAllStringIndex(msg, -1) {
		if d, ok := leadingDuration(msg[loc[1]:]); ok {
			return now.Add(d)
		}
	}
	if m := resetFieldRe().FindStringSubmatch(msg); m != nil {
		v, err := strconv.ParseFloat(m[2], 64)
		if err == nil {
			switch {
			case m[1] == "resets_at":
				return time.Unix(int64(v), 0).In(now.Location())
			case m[3] == "ms":
				return now.Add(scaled(v, time.Millisecond))
			default:
				return now.Add(scaled(v, time.Second))
			}
		}
	}
	return time.Time{}
}

// clockTime turns a resetClockRe match into a time in now's location: a
// bare clock time is today.
func clockTime(m []string, now time.Time) (time.Time, bool) {
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}, false
	}
	hour %= 12
	if strings.EqualFold(m[6], "pm") {
		hour += 12
	}
	year, month, day := now.Date()
	if m[1] != "" {
		t, err := time.Parse("Jan 2 2006", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:])+" "+m[2]+" "+m[3])
		if err != nil {
			return time.Time{}, false
		}
		year, month, day = t.Date()
	}
	return time.Date(year, month, day, hour, minute, 0, 0, now.Location()), true
}

// durationUnits maps the unit words and letters the CLIs use.
var durationUnits = map[string]time.Duration{
	"ms": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// leadingDuration reads a duration at the start of s: "43.5s", "12h22m45s",
// "2 days 17 hours 14 minutes", "91 min", "less than a minute".
func leadingDuration(s string) (time.Duration, bool) {
	if strings.HasPrefix(strings.ToLower(s), "less than a minute") {
		return time.Minute, true
	}
	var total time.Duration
	found := false
	for {
		rest := strings.TrimLeft(s, " ,")
		if strings.HasPrefix(rest, "and ") && found {
			rest = rest[len("and "):]
		}
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			break
		}
		j := i
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		k := j
		for k < len(rest) && unicode.IsLetter(rune(rest[k])) {
			k++
		}
		unit, ok := durationUnits[strings.ToLower(rest[j:k])]
		if !ok {
			break
		}
		total += scaled(n, unit)
		found = true
		s = rest[k:]
	}
	return total, found && total > 0
}

// scaled is n units, rounded to the nanosecond ("1.2s" is exactly 1.2 s).
func scaled(n float64, unit time.Duration) time.Duration {
	return time.Duration(math.Round(n * float64(unit)))
}

// lastLines returns the last n non-empty lines of s, trimmed.
func lastLines(s string, n int) []string {
	var out []string
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// unixTime converts a reset time given in Unix seconds; values too large to
// be seconds are taken as milliseconds.
func unixTime(v float64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	if v > 1e12 {
		return time.UnixMilli(int64(v)).UTC()
	}
	return time.Unix(int64(v), 0).UTC()
}

// exitFailure fails a run that exited non-zero without a verdict of its
// own output, quoting the last line of stderr, which is where CLIs say why.
func exitFailure(res *events.AgentResult, cli string, exitCode int, stderrTail string) {
	if res.Failure != events.FailureNone || exitCode == 0 {
		return
	}
	res.Failure = events.FailureExit
	res.FailureMessage = withStderr(fmt.Sprintf("%s exited with status %d", cli, exitCode), stderrTail)
}

// withStderr appends the last line of stderr to msg, when there is one.
func withStderr(msg, stderrTail string) string {
	if line := lastLine(stderrTail); line != "" {
		return msg + ": " + line
	}
	return msg
}

// maxMessageLine bounds a quoted line in a failure message.
const maxMessageLine = 300

// lastLine is the last non-blank line of s, trimmed and shortened to
// maxMessageLine bytes.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	if len(s) > maxMessageLine {
		cut := maxMessageLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// stderrFailure looks at the last lines of stderr (newest first) for a rate
// limit or a credentials problem; only the tail is read so that a retry
// warning early in a long run does not decide the verdict.
func stderrFailure(stderrTail string, now time.Time) *cliFailure {
	for _, l := range lastLines(stderrTail, 10) {
		if f := newFailure(l, 0, now); f.kind != events.FailureAgent {
			return f
		}
	}
	return nil
}

// exitVerdict is the verdict most CLIs share: the output's own verdict
// stands; otherwise a non-zero exit is a failure, classified from the tail
// of stderr when it shows a rate limit or a credentials problem, else
// FailureExit quoting the last line of stderr.
func exitVerdict(res *events.AgentResult, cli string, exitCode int, stderrTail, authHint string) {
	if res.Failure != events.FailureNone || exitCode == 0 {
		return
	}
	if f := stderrFailure(stderrTail, time.Now()); f != nil {
		f.apply(res, cli, authHint)
		return
	}
	res.Failure = events.FailureExit
	res.FailureMessage = fmt.Sprintf("%s exited with status %d", cli, exitCode)
	if last := lastLines(stderrTail, 1); len(last) > 0 {
		res.FailureMessage += ": " + singleLine(last[0], maxMessage)
	}
}

// toolUse is one tool use found in a CLI's output.
type toolUse struct {
	kind    events.ToolKind
	name    string
	path    string
	command string
}

// record counts u in res once and reports it.
func (u toolUse) record(res *events.AgentResult, report func(events.Activity)) {
	res.Tools.Count(u.kind)
	report(events.Activity{Kind: events.ActivityTool, Tool: u.kind, ToolName: u.name, Path: u.path, Command: u.command})
}

// kindOf looks a tool name up in a CLI's table; unknown tools are "other".
func kindOf(table map[string]events.ToolKind, name string) events.ToolKind {
	if k, ok := table[name]; ok {
		return k
	}
	return events.ToolOther
}

// The keys of a tool's arguments that name its command and its path, in
// the order they are looked for.
var (
	toolCommandKeys = []string{"command", "cmd"}
	toolPathKeys    = []string{"file_path", "filePath", "path", "absolute_path", "dir_path"}
)

// toolArgs are a tool use's JSON arguments as far as newToolUse reads them:
// the values under toolCommandKeys and toolPathKeys, "" for one that is not
// a string. It decodes like the map[string]any it stands for (keys matched
// exactly, the last of duplicates winning, a second object merged into the
// first, null emptying it, a value of another type leaving it as it was)
// but builds none of the other values: a write's arguments hold the whole
// file.
type toolArgs map[string]string

func (a *toolArgs) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case 'n':
		*a = nil
		return dec.SkipValue()
	case '{':
	default:
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		key := toolArgKey(name)
		if key == "" {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if *a == nil {
			*a = toolArgs{}
		}
		(*a)[key] = ""
		if v.Kind() == '"' {
			(*a)[key] = unquote(v)
		}
	}
	_, err := dec.ReadToken()
	return err
}

// toolArgKey is the key of toolCommandKeys or toolPathKeys that the
// object name quoted is, or "".
func toolArgKey(quoted jsontext.Value) string {
	name := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		name = []byte(unquote(quoted)) // an escape spells a key, seldom
	}
	for _, keys := range [][]string{toolCommandKeys, toolPathKeys} {
		for _, k := range keys {
			if string(name) == k {
				return k
			}
		}
	}
	return ""
}

// firstString returns the first non-empty value among keys of a.
func (a toolArgs) firstString(keys []string) string {
	for _, k := range keys {
		if s := a[k]; s != "" {
			return s
		}
	}
	return ""
}

// newToolUse builds a toolUse from a tool's name and its JSON arguments,
// reading the path and command under the keys the CLIs use.
func newToolUse(table map[string]events.ToolKind, name string, args toolArgs) toolUse {
	u := toolUse{kind: kindOf(table, name), name: name}
	switch u.kind {
	case events.ToolShell:
		u.command = args.firstString(toolCommandKeys)
	case events.ToolRead, events.ToolWrite:
		u.path = args.firstString(toolPathKeys)
	case events.ToolOther:
		// Known by its name alone.
	}
	return u
}

// modelArgs returns flag and model when a model is set.
func modelArgs(flag, model string) []string {
	if model == "" {
		return nil
	}
	return []string{flag, model}
}

// unwrapShell turns codex's `/bin/bash -lc 'echo hi >> hello.txt'` into
// the command the model asked for; anything else comes back unchanged.
func unwrapShell(cmd string) string {
	for _, prefix := range []string{"/bin/bash -lc ", "/bin/bash -c ", "bash -lc ", "bash -c ", "/bin/sh -c ", "sh -c ", "/bin/zsh -lc ", "zsh -lc "} {
		if rest, ok := strings.CutPrefix(cmd, prefix); ok {
			if word, ok := shellWord(rest); ok {
				return word
			}
			return cmd
		}
	}
	return cmd
}

// shellWord parses s as exactly one POSIX shell word made of single-quoted,
// double-quoted and plain parts.
func shellWord(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return "", false
			}
			i = j
		case '\\':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i])
		case ' ', '\t', '\n':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

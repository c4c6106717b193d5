package backends

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ralph-loop/ralph/events"
)

// This file holds what the claude and command backends share. (jsonl.go
// holds the helpers of the other JSON-lines CLIs.)

// eachLine calls fn with every line of r, without its line ending, up to
// EOF or a read error. Agent JSON lines can be megabytes long (a whole file
// in a tool result), so it reads with bufio.Reader rather than a
// bufio.Scanner and its 64 KiB token limit. A last line without a newline
// (the agent was killed mid-write) is passed on too.
func eachLine(r io.Reader, fn func(line []byte)) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			fn(bytes.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

// decodeObject decodes one JSON object line into v. A field of unexpected
// type is left zero rather than costing the whole line, because CLIs change
// field types between versions. It reports false for anything that is not
// a JSON object: banners, warnings, a truncated last line.
func decodeObject(line []byte, v any) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	err := json.Unmarshal(line, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
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

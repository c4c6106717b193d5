package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Log appends events to a JSONL file. Any number of Logs, in any number of
// processes, may append to the same file at once: each event is written with
// one write(2) on a file opened with O_APPEND, so the kernel puts every line
// whole at the end of the file and lines never interleave. A Log is safe for
// concurrent use.
//
// Append does not fsync: a line reaches the kernel before Append returns and
// survives the death of the process, but not necessarily a power failure.
// Call Sync where that matters (before a checkpoint that records the offset).
type Log struct {
	f    *os.File
	path string
}

// OpenLog opens the event log at path for appending, creating the file
// and its directories as needed, for the user alone (0600, 0700): the log
// holds what agents published. A link at path is refused, never appended
// through (O_NOFOLLOW, or a look first where the system has no such
// flag); the caller checks the directories above it.
func OpenLog(path string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	f, err := openAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	return &Log{f: f, path: path}, nil
}

// Path is the file the log appends to.
func (l *Log) Path() string { return l.path }

// Append writes ev as one line. A zero TS is set to the current UTC time. A
// payload that would make the line longer than MaxLineBytes is cut to fit
// (FitPayload).
// The topic must pass ValidateTopic, so ralph never writes a line of its own
// that it would not route, unless the event is one an agent published (see
// [Published]).
func (l *Log) Append(ev Event) error {
	line, err := prepareLine(ev)
	if err != nil {
		return fmt.Errorf("append to event log %s: %w", l.path, err)
	}
	// One Write for the whole line, newline included: that is what keeps
	// concurrent appenders from interleaving.
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("append to event log %s: %w", l.path, err)
	}
	return nil
}

// Sync flushes appended lines to stable storage.
func (l *Log) Sync() error {
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync event log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the file. Appending after Close returns an error.
func (l *Log) Close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close event log %s: %w", l.path, err)
	}
	return nil
}

// AppendTo opens the log at path, appends ev and closes it: one event from a
// short-lived process such as `ralph emit`.
func AppendTo(path string, ev Event) (err error) {
	l, err := OpenLog(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := l.Close(); err == nil {
			err = cerr
		}
	}()
	return l.Append(ev)
}

// checkTopic is Append's rule for topics. An empty topic is refused for
// every event, because the line would not read back as an event at all.
func checkTopic(ev Event) error {
	if ev.Topic != "" && ev.Published() {
		return nil
	}
	return ValidateTopic(ev.Topic)
}

// prepareLine checks ev's topic, stamps it and encodes it, its payload cut
// when the line would be longer than readers read (FitPayload).
func prepareLine(ev Event) ([]byte, error) {
	if err := checkTopic(ev); err != nil {
		return nil, err
	}
	if ev.TS.IsZero() {
		ev.TS = time.Now().UTC()
	}
	line, err := EncodeLine(ev)
	if err != nil || len(line) <= MaxLineBytes {
		return line, err
	}
	if ev, _, err = fitPayload(ev, len(line)); err != nil {
		return nil, err
	}
	return EncodeLine(ev)
}

// EncodeLine renders ev exactly as Log.Append writes it (without stamping a
// zero TS): one JSON object with keys in the order ts, topic, payload,
// iteration, hat, source, target, then a newline. A nil, empty or blank
// Payload is written as null. HTML characters are not escaped, so payloads
// that quote <event> tags or shell commands stay readable in the file.
func EncodeLine(ev Event) ([]byte, error) {
	if len(bytes.TrimSpace(ev.Payload)) == 0 {
		ev.Payload = nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encode ends the line with '\n'; the payload is compacted, so the JSON
	// itself holds no raw newline.
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("encode event %q: %w", ev.Topic, err)
	}
	return buf.Bytes(), nil
}

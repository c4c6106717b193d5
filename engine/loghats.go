package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ralph-loop/ralph/events"
)

// RunHats returns the configured hats of the run whose event log is at
// path, by ID in config order, as the last loop.started or loop.resumed line
// records them. ok is false when no line does: the file is missing or is
// not a ralph run's log. The coordinator is not listed; every run has it.
func RunHats(path string) (ids []string, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the run's hats from %s: %w", path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return ids, ok, nil // a line without its newline does not count yet
		}
		if err != nil {
			return nil, false, fmt.Errorf("read the run's hats from %s: %w", path, err)
		}
		if hats, found := lineHats(line); found {
			ids, ok = hats, true
		}
	}
}

// readLine returns the next line with its newline. A line that fits the
// buffer is not copied: most lines are skipped unread, and a log can be
// large.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	// line is the reader's buffer, which the next read overwrites.
	head := bytes.Clone(line)
	rest, err := br.ReadBytes('\n')
	return append(head, rest...), err
}

// Topic fields as EncodeLine writes them, to skip the other lines without
// decoding them: `ralph emit --target` reads the whole log each time.
var (
	startedField = []byte(`"topic":"` + TopicLoopStarted + `"`)
	resumedField = []byte(`"topic":"` + TopicLoopResumed + `"`)
)

// lineHats returns the hats a loop.started or loop.resumed line of ralph's
// records, and whether it records them.
func lineHats(line []byte) ([]string, bool) {
	if !bytes.Contains(line, startedField) && !bytes.Contains(line, resumedField) {
		return nil, false
	}
	ev, err := events.ParseLine(line)
	if err != nil || ev.Source != events.SourceRalph ||
		(ev.Topic != TopicLoopStarted && ev.Topic != TopicLoopResumed) {
		return nil, false
	}
	var r struct {
		Hats *[]string `json:"hats"`
	}
	if !decode(ev, &r) || r.Hats == nil {
		return nil, false
	}
	return *r.Hats, true
}

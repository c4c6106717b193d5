package runfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ralph-loop/ralph/events"
)

// endScan bounds how much of a log's end RunEnded reads: a run's last
// lines of ralph's are near the end, and `ralph emit` runs it every time.
const endScan = 1 << 20

// RunEnded reports whether the run whose event log is at path has ended,
// and how: whether the last of ralph's loop.started, loop.resumed and
// loop.terminate lines within the log's last MiB is a loop.terminate. A
// missing log, or one whose end holds none of those lines, has not ended
// as far as this can tell.
func RunEnded(path string) (Reason, bool, error) {
	ev, ended, err := RunEnd(path)
	if err != nil || !ended {
		return "", false, err
	}
	var r TerminateRecord
	Decode(ev, &r)
	return r.Reason, r.Reason != "", nil
}

// RunEnd is RunEnded's loop.terminate line itself, for its figures: the
// events published into an ended run, which wait for its resume, come
// after it.
func RunEnd(path string) (events.Event, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return events.Event{}, false, nil
	}
	if err != nil {
		return events.Event{}, false, fmt.Errorf("read the end of %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return events.Event{}, false, fmt.Errorf("read the end of %s: %w", path, err)
	}
	start := max(0, size-endScan)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return events.Event{}, false, fmt.Errorf("read the end of %s: %w", path, err)
	}
	for len(buf) > 0 {
		i := bytes.LastIndexByte(bytes.TrimSuffix(buf, []byte("\n")), '\n')
		line := buf[i+1:]
		buf = buf[:max(i, 0)]
		if ev, decided := runBoundary(line); decided {
			return ev, ev.Topic == TopicLoopTerminate, nil
		}
		if i < 0 {
			break
		}
	}
	return events.Event{}, false, nil
}

// runBoundary reads a line of ralph's that starts or ends a run
// (loop.started, loop.resumed, loop.terminate); decided is false for any
// other line.
func runBoundary(line []byte) (ev events.Event, decided bool) {
	if !bytes.Contains(line, []byte(`"topic":"loop.`)) {
		return events.Event{}, false
	}
	ev, err := events.ParseLine(line)
	if err != nil || ev.Source != events.SourceRalph {
		return events.Event{}, false
	}
	switch ev.Topic {
	case TopicLoopStarted, TopicLoopResumed, TopicLoopTerminate:
		return ev, true
	}
	return events.Event{}, false
}

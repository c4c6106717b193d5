// Package benchgen owns the synthetic inputs that ralph's benchmarks read:
// a deterministic event log of any length shaped like a long two-hat run,
// and a backlog of any size in each task tracker's own files
// (WriteBacklog), so that an in-process benchmark and a whole-process
// driver time the same bytes. It writes files only; it knows nothing of
// ralph's other packages.
package benchgen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Cycle is the topics a generated log repeats, one iteration of a two-hat
// run every 8 lines: a benchmark knows how many lines a filter must print
// (n/len(Cycle) per entry) without reading the log.
var Cycle = []struct{ Topic, Source, Hat string }{
	{"iteration.started", "ralph", ""},
	{"build.done", "agent", "builder"},
	{"iteration.finished", "ralph", ""},
	{"event.routed", "ralph", ""},
	{"iteration.started", "ralph", ""},
	{"review.approved", "tag", "reviewer"},
	{"iteration.finished", "ralph", ""},
	{"event.routed", "ralph", ""},
}

// Start is the first line's time; each line is 100ms after the previous.
var Start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Write writes n lines to w and returns how many bytes it wrote. The same n
// always gives the same bytes.
func Write(w io.Writer, n int) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var written int64
	for i := range n {
		k, err := fmt.Fprintln(bw, Line(i))
		if err != nil {
			return written, err
		}
		written += int64(k)
	}
	return written, bw.Flush()
}

// WriteFile writes an n-line log to path, replacing it, and returns its size.
func WriteFile(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("benchgen: %w", err)
	}
	size, err := Write(f, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("benchgen: write %s: %w", path, err)
	}
	return size, nil
}

// Line is the i-th line of a generated log, without its newline. The
// bookkeeping payloads mention build.done and the hats, as real ones do, so
// that a filter must look past a payload that merely names what it seeks.
func Line(i int) string {
	k := Cycle[i%len(Cycle)]
	iter := i/4 + 1
	ts := Start.Add(time.Duration(i) * 100 * time.Millisecond).Format(time.RFC3339Nano)
	var payload string
	switch k.Topic {
	case "iteration.started":
		payload = fmt.Sprintf(`{"iteration":%d,"hat":"builder","events":[%d],"backend":"claude"}`, iter, i*180)
	case "iteration.finished":
		payload = fmt.Sprintf(`{"iteration":%d,"hat":"builder","outcome":"success","exit_code":0,"duration_ms":%d,"tokens":{"input_tokens":%d,"output_tokens":%d},"cost_usd":0.0123,"tools":{"read":3,"write":1,"shell":2}}`, iter, 1000+i%5000, 1000+i%777, 200+i%99)
	case "event.routed":
		payload = fmt.Sprintf(`{"offset":%d,"topic":"build.done","to":["reviewer"]}`, i*180)
	default:
		payload = fmt.Sprintf(`"tests: pass, lint: pass, run %d"`, i)
	}
	hat := ""
	if k.Hat != "" {
		hat = fmt.Sprintf(`,"iteration":%d,"hat":%q`, iter, k.Hat)
	}
	return fmt.Sprintf(`{"ts":%q,"topic":%q,"payload":%s%s,"source":%q}`, ts, k.Topic, payload, hat, k.Source)
}

// Interleave is a generated log of n lines with extra lines among them
// (malformed, blank, oversized: whatever a reader must cope with): extra[k]
// after every every-th generated line in turn, then all of extra, then
// ending, a last line without its newline or "".
func Interleave(n, every int, extra []string, ending string) []byte {
	var b strings.Builder
	for i := range n {
		b.WriteString(Line(i) + "\n")
		if len(extra) > 0 && i%every == every/2 {
			b.WriteString(extra[(i/every)%len(extra)] + "\n")
		}
	}
	for _, line := range extra {
		b.WriteString(line + "\n")
	}
	b.WriteString(ending)
	return []byte(b.String())
}

package runfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/benchgen"
)

// lastEventsByReadingAll is LastEvents as it was before it read the log
// backwards: every line read forwards, the last n well-formed events kept.
// LastEvents must return exactly what it returns.
func lastEventsByReadingAll(path string, n int) []events.Event {
	if n <= 0 {
		return nil
	}
	recs, err := events.NewReader(path, 0).Read()
	if err != nil {
		return nil
	}
	var out []events.Event
	for _, r := range recs {
		if r.Err == nil {
			out = append(out, r.Event)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// statusLog writes a generated log with malformed and blank lines among its
// events (a run of malformed ones at the end, some longer than the backward
// scanner's block) and the given ending after its last complete line.
func statusLog(t *testing.T, generated int, ending string) string {
	t.Helper()
	odd := []string{
		`{not json`,
		``,
		`   `,
		`{"topic":""}`,
		`{"payload":"no topic"}`,
		"\t\r",
		`{"topic":"build.done","payload":` + strings.Repeat(" ", 70<<10) + `"long"}`,
		`{"topic":"x","payload":"` + strings.Repeat("é", 40<<10),
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, benchgen.Interleave(generated, 7, odd, ending), 0o644))
	return path
}

// TestLastEventsMatchesReadingAll holds LastEvents to the whole-log read on
// generated logs: malformed and blank lines skipped, a torn last line left
// out, for every n up to past the number of events.
func TestLastEventsMatchesReadingAll(t *testing.T) {
	endings := map[string]string{
		"complete":   "",
		"torn":       `{"ts":"2026-11-22T11:00:00Z","topic":"build.done","payload":"half`,
		"torn-event": `{"topic":"loop.terminate","source":"ralph"}`,
		"blank":      "\n\n  \n",
	}
	for name, ending := range endings {
		for _, generated := range []int{0, 1, 5, 300} {
			path := statusLog(t, generated, ending)
			for _, n := range []int{-1, 0, 1, 2, 5, 20, 299, 300, 301, 1000} {
				want := lastEventsByReadingAll(path, n)
				got := LastEvents(path, n)
				require.Equal(t, want, got, fmt.Sprintf("%s log of %d generated lines, n %d", name, generated, n))
			}
		}
	}
	require.Nil(t, LastEvents(filepath.Join(t.TempDir(), "missing.jsonl"), 5), "a missing log has no events")
}

// BenchmarkLastEvents reads the last 10 events of generated logs of two
// sizes: ralph status's cost, which must not grow with the log.
func BenchmarkLastEvents(b *testing.B) {
	for _, lines := range []int{10_000, 1_000_000} {
		path := filepath.Join(b.TempDir(), "events.jsonl")
		if _, err := benchgen.WriteFile(path, lines); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := LastEvents(path, 10); len(got) != 10 {
					b.Fatalf("%d events, want 10", len(got))
				}
			}
		})
	}
}

func TestReadLogProgressStopsAtTheLastRunsStart(t *testing.T) {
	const (
		started    = `{"ts":"2026-11-22T10:00:00Z","topic":"loop.started","payload":{},"source":"ralph"}` + "\n"
		resumed    = `{"ts":"2026-11-22T10:10:00Z","topic":"loop.resumed","payload":{},"source":"ralph"}` + "\n"
		iteration1 = `{"ts":"2026-11-22T10:00:01Z","topic":"iteration.started","payload":{"iteration":1,"hat":"builder"},"source":"ralph"}` + "\n"
		finished1  = `{"ts":"2026-11-22T10:02:00Z","topic":"iteration.finished","payload":{"iteration":1,"hat":"builder","outcome":"success"},"source":"ralph"}` + "\n"
		fake       = `{"ts":"2026-11-22T10:02:01Z","topic":"iteration.started","payload":{"iteration":9,"hat":"liar"},"source":"agent"}` + "\n"
		completed  = `{"ts":"2026-11-22T10:20:00Z","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0},"source":"ralph"}` + "\n"
	)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cases := []struct {
		name, log string
		want      LogProgress
	}{
		{"a missing log", "", LogProgress{}},
		{"a run without iterations", started, LogProgress{}},
		{"an iteration running", started + iteration1 + fake + "{not json\n", LogProgress{Hat: "builder", Iteration: 1}},
		{"an ended run", started + iteration1 + finished1 + completed, LogProgress{Hat: "builder", Iteration: 1, Ended: ReasonCompleted}},
		{"a resumed run goes on from its iterations", started + iteration1 + finished1 + completed + resumed, LogProgress{Hat: "builder", Iteration: 1}},
		{"a new run has none of the last run's", started + iteration1 + completed + started, LogProgress{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(path)
			if c.log != "" {
				require.NoError(t, os.WriteFile(path, []byte(c.log), 0o644))
			}
			got, err := ReadLogProgress(path)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

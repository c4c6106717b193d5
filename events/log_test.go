package events_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/golden"
)

// The subprocess variant of the concurrency test re-executes the test binary
// with these variables set; TestMain then runs appendMany instead of tests.
const (
	appenderPathEnv   = "RALPH_EVENTS_TEST_APPEND_PATH"
	appenderWriterEnv = "RALPH_EVENTS_TEST_APPEND_WRITER"
	appenderCountEnv  = "RALPH_EVENTS_TEST_APPEND_COUNT"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(appenderPathEnv); path != "" {
		os.Exit(runAppenderProcess(path))
	}
	os.Exit(m.Run())
}

func runAppenderProcess(path string) int {
	writer, err1 := strconv.Atoi(os.Getenv(appenderWriterEnv))
	count, err2 := strconv.Atoi(os.Getenv(appenderCountEnv))
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "appender: bad writer or count")
		return 2
	}
	log, err := events.OpenLog(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	if err := appendMany(log, writer, count); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// concurrentPayload is what writer puts in its seq-th event: "writer:seq:"
// then padding. Every 64th payload is larger than PIPE_BUF (4 KiB), where a
// torn or interleaved write would show if the file were not opened with
// O_APPEND or a line took two writes.
func concurrentPayload(writer, seq int) string {
	n := 16 + seq%32
	if seq%64 == 0 {
		n = 6000
	}
	return fmt.Sprintf("%d:%d:%s", writer, seq, strings.Repeat(string(rune('a'+writer%26)), n))
}

func appendMany(log *events.Log, writer, count int) error {
	for seq := range count {
		ev := events.Event{Topic: "load.test", Payload: events.StringPayload(concurrentPayload(writer, seq))}
		if err := log.Append(ev); err != nil {
			return err
		}
	}
	return nil
}

// checkConcurrentLog asserts that the log holds exactly writers×count whole
// lines, each writer's in order, none torn. It avoids testify in the loop:
// under -race, 40,000 assertions would dominate the test's run time.
func checkConcurrentLog(t *testing.T, path string, writers, count int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	next := make([]int, writers)
	lines, end := 0, int64(0)
	err = events.Scan(f, func(r events.Record) error {
		lines++
		end = r.End()
		if r.Err != nil {
			return fmt.Errorf("torn line at byte %d: %w", r.Offset, r.Err)
		}
		var writer, seq int
		if _, err := fmt.Sscanf(r.Event.PayloadText(), "%d:%d:", &writer, &seq); err != nil || writer >= writers {
			return fmt.Errorf("line at byte %d: bad payload: %.80s", r.Offset, r.Line)
		}
		if seq != next[writer] || r.Event.PayloadText() != concurrentPayload(writer, seq) {
			return fmt.Errorf("line at byte %d: writer %d: got seq %d, want %d", r.Offset, writer, seq, next[writer])
		}
		next[writer]++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, writers*count, lines)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, info.Size(), end, "no trailing partial line")
}

// TestLogConcurrentGoroutines has half the writers share one Log (one file
// descriptor, used concurrently) and half open their own (as separate
// processes would).
func TestLogConcurrentGoroutines(t *testing.T) {
	const writers, count = 8, 5000
	path := filepath.Join(t.TempDir(), "events.jsonl")
	shared, err := events.OpenLog(path)
	require.NoError(t, err)
	defer shared.Close()

	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			if w%2 == 0 {
				errs[w] = appendMany(shared, w, count)
				return
			}
			own, err := events.OpenLog(path)
			if err != nil {
				errs[w] = err
				return
			}
			defer own.Close()
			errs[w] = appendMany(own, w, count)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	checkConcurrentLog(t, path, writers, count)
}

func TestLogConcurrentProcesses(t *testing.T) {
	const writers, count = 8, 5000
	path := filepath.Join(t.TempDir(), "events.jsonl")
	cmds := make([]*exec.Cmd, writers)
	outputs := make([]strings.Builder, writers)
	for w := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			appenderPathEnv+"="+path,
			appenderWriterEnv+"="+strconv.Itoa(w),
			appenderCountEnv+"="+strconv.Itoa(count))
		cmd.Stdout, cmd.Stderr = &outputs[w], &outputs[w]
		require.NoError(t, cmd.Start())
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "appender %d: %s", w, outputs[w].String())
	}
	checkConcurrentLog(t, path, writers, count)
}

func TestLogAppendGolden(t *testing.T) {
	ts := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	evs := []events.Event{
		{TS: ts, Topic: "build.done", Payload: events.StringPayload("tests: pass"), Iteration: 3, Hat: "builder", Source: events.SourceAgent},
		{TS: ts, Topic: "iteration.started", Iteration: 1, Hat: "planner", Source: events.SourceRalph},
		{TS: ts, Topic: "empty.payload", Payload: json.RawMessage{}},
		{TS: ts, Topic: "blank.payload", Payload: json.RawMessage(" \n")},
		{TS: ts, Topic: "object", Payload: json.RawMessage("{\n  \"status\": \"approved\",\n  \"files\": [\"a.go\"]\n}")},
		{TS: ts, Topic: "array.and.number", Payload: json.RawMessage(`[1, 2.5, -3e2]`)},
		{TS: ts, Topic: "html.not.escaped", Payload: events.StringPayload(`<event topic="x">a && b</event>`)},
		{TS: ts, Topic: "multi.line", Payload: events.StringPayload("line 1\nline 2\ttab \"quoted\" é \u2028")},
		{TS: ts, Topic: "review.request", Target: "reviewer", Source: events.SourceTag},
		{TS: time.Date(2024, 1, 1, 12, 0, 0, 0, time.FixedZone("", 2*3600)), Topic: "LOOP_COMPLETE"},
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	log, err := events.OpenLog(path)
	require.NoError(t, err)
	for _, ev := range evs {
		require.NoError(t, log.Append(ev))
	}
	require.NoError(t, log.Sync())
	require.NoError(t, log.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)

	golden.Assert(t, filepath.Join("testdata", "append.golden"), string(got))
}

func TestLogAppendStampsZeroTS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	before := time.Now()
	require.NoError(t, events.AppendTo(path, events.Event{Topic: "a"}))
	after := time.Now()

	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	ts := recs[0].Event.TS
	assert.Equal(t, time.UTC, ts.Location())
	assert.False(t, ts.Before(before.Truncate(time.Microsecond)) || ts.After(after), "ts %v", ts)
	assert.Contains(t, string(recs[0].Line), `"payload":null`)
}

func TestLogAppendRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	ev := events.Event{
		TS:        time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Topic:     "review.done",
		Payload:   json.RawMessage(`{"ok":true,"notes":["x"]}`),
		Iteration: 7,
		Hat:       "reviewer",
		Source:    events.SourceAgent,
		Target:    "finalizer",
	}
	require.NoError(t, events.AppendTo(path, ev))
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.NoError(t, recs[0].Err)
	assert.Equal(t, ev, recs[0].Event)
}

func TestLogAppendRejects(t *testing.T) {
	tests := []struct {
		name    string
		ev      events.Event
		wantErr string
	}{
		{"empty topic", events.Event{}, "it is empty"},
		{"invalid topic", events.Event{Topic: "build done"}, `invalid topic "build done"`},
		{"wildcard topic", events.Event{Topic: "task.*"}, "wildcard"},
		{"invalid topic of ralph's own", events.Event{Topic: "a..b", Source: events.SourceRalph}, "empty segment"},
		{"empty topic from an agent", events.Event{Source: events.SourceTag}, "it is empty"},
		{"invalid payload", events.Event{Topic: "a", Payload: json.RawMessage(`{not json`)}, `encode event "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			err := events.AppendTo(path, tt.ev)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "append to event log "+path)
			assert.Contains(t, err.Error(), tt.wantErr)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Empty(t, data, "nothing written")
		})
	}
}

// An agent's event is the record of what it said: a topic ralph cannot
// route is written as given, in a line that reads back as that event, for
// the engine to reject. Losing it would lose the agent's mistake.
func TestLogAppendRecordsAnAgentsInvalidTopic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var want []events.Event
	for _, src := range []string{events.SourceTag, events.SourceAgent} {
		for _, topic := range []string{"bad topic", "a..b", "build.*", "über.done", "a[1]", "tab\there"} {
			ev := events.Event{TS: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Topic: topic,
				Payload: events.StringPayload("p"), Source: src}
			require.NoError(t, events.AppendTo(path, ev), "%s %q", src, topic)
			want = append(want, ev)
		}
	}
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	require.Len(t, recs, len(want))
	for i, rec := range recs {
		require.NoError(t, rec.Err)
		assert.Equal(t, want[i], rec.Event)
		assert.ErrorIs(t, events.ValidateTopic(rec.Event.Topic), events.ErrInvalidTopic)
	}
}

func TestOpenLogCreatesDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ralph", "nested", "events.jsonl")
	log, err := events.OpenLog(path)
	require.NoError(t, err)
	assert.Equal(t, path, log.Path())
	require.NoError(t, log.Close())
	if runtime.GOOS == "windows" {
		return // no permission bits
	}
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the log holds what agents published: the user's alone")
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
}

func TestOpenLogRefusesALink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := filepath.Join(t.TempDir(), "precious.txt")
	require.NoError(t, os.WriteFile(outside, []byte("mine\n"), 0o644))
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.Symlink(outside, path))
	_, err := events.OpenLog(path)
	require.Error(t, err)
	require.Error(t, events.AppendTo(path, events.Event{Topic: "build.done"}))
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data), "nothing appended through the link")
}

func TestOpenLogAppendsToExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"topic":"old"}`+"\n"), 0o644))
	require.NoError(t, events.AppendTo(path, events.Event{Topic: "new"}))
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	assert.Equal(t, []string{"old", "new"}, topics(recs))
}

func TestOpenLogError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := events.OpenLog(filepath.Join(file, "events.jsonl")) // parent is a file
	require.Error(t, err)
	assert.Contains(t, err.Error(), "open event log ")
}

func TestLogAppendAfterClose(t *testing.T) {
	log, err := events.OpenLog(filepath.Join(t.TempDir(), "events.jsonl"))
	require.NoError(t, err)
	require.NoError(t, log.Close())
	require.ErrorIs(t, log.Append(events.Event{Topic: "a"}), os.ErrClosed)
	require.Error(t, log.Close())
}

package view

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

// TestEventListing lists a short log through a filter and --last, and
// counts the malformed line --json leaves out (with --last, only when it is
// among the lines read back from the end).
func TestEventListing(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	lines := []events.Event{
		{TS: start, Topic: "loop.started", Source: events.SourceRalph, Payload: json.RawMessage(`{"run_id":"r"}`)},
		{TS: start.Add(time.Minute), Topic: "build.task", Source: events.SourceTag, Iteration: 1, Hat: "ralph", Payload: events.StringPayload("a")},
		{TS: start.Add(2 * time.Minute), Topic: "build.done", Source: events.SourceAgent, Iteration: 2, Hat: "builder", Payload: events.StringPayload("b")},
		{TS: start.Add(3 * time.Minute), Topic: "build.done", Source: events.SourceAgent, Iteration: 3, Hat: "builder", Payload: events.StringPayload("c")},
		{TS: start.Add(4 * time.Minute), Topic: "loop.terminate", Source: events.SourceRalph, Payload: json.RawMessage(`{"reason":"completed"}`)},
	}
	var b strings.Builder
	for i, ev := range lines {
		line, err := events.EncodeLine(ev)
		require.NoError(t, err)
		b.Write(line)
		if i == 2 {
			b.WriteString("{not json\n")
		}
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))

	list := func(f EventFilter, last int, follow bool) ([]string, int) {
		var out bytes.Buffer
		p := &EventPrinter{W: &out, JSON: true, Loc: time.UTC}
		l := EventListing{Printer: p, Filter: f, Last: last, Follow: follow, Flush: func() error { return nil }}
		require.NoError(t, l.List(context.Background(), path))
		var topics []string
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			ev, err := events.ParseLine([]byte(line))
			require.NoError(t, err)
			topics = append(topics, ev.Topic)
		}
		return topics, p.Malformed
	}
	topics, malformed := list(EventFilter{}, 0, false)
	assert.Equal(t, []string{"loop.started", "build.task", "build.done", "build.done", "loop.terminate"}, topics)
	assert.Equal(t, 1, malformed)
	// --last reads from the end and counts the malformed lines among the
	// lines it read: none after the last two events, one after the last
	// three.
	topics, malformed = list(EventFilter{}, 2, false)
	assert.Equal(t, []string{"build.done", "loop.terminate"}, topics)
	assert.Equal(t, 0, malformed)
	topics, malformed = list(EventFilter{}, 3, false)
	assert.Equal(t, []string{"build.done", "build.done", "loop.terminate"}, topics)
	assert.Equal(t, 1, malformed)
	topics, _ = list(EventFilter{Topic: "build.*", Hat: "builder"}, 1, false)
	assert.Equal(t, []string{"build.done"}, topics)
	topics, _ = list(EventFilter{Iteration: 1}, 0, false)
	assert.Equal(t, []string{"build.task"}, topics)
	topics, _ = list(EventFilter{Since: start.Add(150 * time.Second)}, 0, false)
	assert.Equal(t, []string{"build.done", "loop.terminate"}, topics)
	// Following a run that has ended returns at once.
	topics, _ = list(EventFilter{Topic: "loop.*"}, 0, true)
	assert.Equal(t, []string{"loop.started", "loop.terminate"}, topics)
}

// Lines of a remote task's copy of its loop log.
const (
	cutOffStarted  = `{"ts":"2026-11-22T10:00:00Z","topic":"loop.started","payload":{"run_id":"r"},"source":"ralph"}` + "\n"
	cutOffBuild    = `{"ts":"2026-11-22T10:01:00Z","topic":"build.done","payload":"a","source":"agent","hat":"builder","iteration":1}` + "\n"
	cutOffStop     = `{"ts":"2026-11-22T10:02:00Z","topic":"loop.terminate","payload":{"reason":"interrupted","exit_code":130},"source":"ralph"}` + "\n"
	cutOffResumed  = `{"ts":"2026-11-22T10:03:00Z","topic":"loop.resumed","payload":{"run_id":"r"},"source":"ralph"}` + "\n"
	cutOffComplete = `{"ts":"2026-11-22T10:04:00Z","topic":"loop.terminate","payload":{"reason":"completed","exit_code":0},"source":"ralph"}` + "\n"
)

// followed runs a follow of the log at path in the background and hands
// back the topics it prints, one by one, and its end.
func followed(t *testing.T, l EventListing, path string) (<-chan string, <-chan error) {
	t.Helper()
	r, w := io.Pipe()
	l.Printer = &EventPrinter{W: w, JSON: true, Loc: time.UTC}
	l.Follow = true
	topics, done := make(chan string, 100), make(chan error, 1)
	go func() {
		err := l.List(t.Context(), path)
		_ = w.Close()
		done <- err
	}()
	go func() {
		defer close(topics)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ev, err := events.ParseLine(sc.Bytes())
			if err != nil {
				topics <- "malformed"
				continue
			}
			topics <- ev.Topic
		}
	}()
	return topics, done
}

// next waits for the follow's next printed topic.
func next(t *testing.T, topics <-chan string) string {
	t.Helper()
	select {
	case topic := <-topics:
		return topic
	case <-time.After(10 * time.Second):
		t.Fatal("no line printed")
		return ""
	}
}

func ended(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end")
	}
}

func appendTo(t *testing.T, path, lines string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(lines)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestFollowGoesOnPastACutOffRunWhileAnotherLoopMay follows a remote
// task's copy past the run a worker cut off, into the next worker's run,
// and ends once GoesOn says no other loop will come, when Watch changes.
func TestFollowGoesOnPastACutOffRunWhileAnotherLoopMay(t *testing.T) {
	dir := t.TempDir()
	path, watch := filepath.Join(dir, "tasks", "events.jsonl"), filepath.Join(dir, "autopilot-events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	appendTo(t, path, cutOffStarted+cutOffBuild+cutOffStop)
	appendTo(t, watch, "")
	var goesOn atomic.Bool
	goesOn.Store(true)
	topics, done := followed(t, EventListing{GoesOn: goesOn.Load, Watch: watch}, path)
	for _, want := range []string{"loop.started", "build.done", "loop.terminate"} {
		require.Equal(t, want, next(t, topics))
	}

	appendTo(t, path, cutOffResumed+cutOffBuild)
	require.Equal(t, "loop.resumed", next(t, topics), "the next worker's run")
	require.Equal(t, "build.done", next(t, topics))
	appendTo(t, path, cutOffStop)
	require.Equal(t, "loop.terminate", next(t, topics))

	appendTo(t, watch, "a line of the autopilot's\n")
	goesOn.Store(false)
	appendTo(t, watch, "another\n")
	ended(t, done)
}

// TestFollowEndsAtAJudgedOrUnclaimedRun: a run that completed ends the
// follow whatever GoesOn says, and a cut-off one does when no GoesOn is
// given or it says no.
func TestFollowEndsAtAJudgedOrUnclaimedRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	appendTo(t, path, cutOffStarted+cutOffStop)
	for name, l := range map[string]EventListing{
		"no GoesOn":      {},
		"GoesOn says no": {GoesOn: func() bool { return false }},
	} {
		t.Run(name, func(t *testing.T) {
			topics, done := followed(t, l, path)
			ended(t, done)
			assert.Equal(t, "loop.started", next(t, topics))
			assert.Equal(t, "loop.terminate", next(t, topics))
		})
	}
	t.Run("completed", func(t *testing.T) {
		appendTo(t, path, cutOffResumed+cutOffComplete)
		topics, done := followed(t, EventListing{GoesOn: func() bool { return true }, Last: 1}, path)
		ended(t, done)
		assert.Equal(t, "loop.terminate", next(t, topics))
	})
}

package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// fuzzNow is the save time of the checkpoints the fuzz targets write, so
// that two saves of one state give the same bytes.
var fuzzNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fullRunState is a checkpoint with every field set, in the shapes a run
// writes, including times in other zones and payloads of every JSON kind.
func fullRunState() *runfiles.RunState {
	paris := time.FixedZone("CET", 3600)
	claim := "all done"
	s := runfiles.NewRunState()
	*s = runfiles.RunState{
		RunID: "20261122-100000-ab12", EventsFile: ".ralph/events-20261122-100000.jsonl", Offset: 4096,
		Objective: "Add ISO week numbers\nto the date helpers", MaxIterations: 40, Iteration: 3,
		Running: &runfiles.RunningIteration{Iteration: 4, Hat: "builder", Events: []int64{100, 200}, Confirming: true,
			StartedAt: time.Date(2026, 11, 22, 11, 0, 0, 5, paris), Offset: 3900},
		LastFinished: &runfiles.FinishedIteration{Iteration: 3, Hat: "planner", Outcome: "success", Message: "ok",
			Said: "build.start", Changed: true, Commits: 2, TasksDone: 1},
		Settled: 3, LastNote: "note",
		Pending: []runfiles.PendingEvent{
			{Offset: 100, Event: events.Event{TS: fuzzNow, Topic: "build.start", Payload: events.StringPayload("<go> & \"quote\""), Iteration: 3, Hat: "planner", Source: events.SourceTag}, To: []string{"builder"}},
			{Offset: 200, Event: events.Event{TS: fuzzNow.In(paris), Topic: "review.done", Payload: json.RawMessage(`{"k":[1,2.5,null,true]}`), Target: "reviewer"}},
		},
		Undecided:           []runfiles.UndecidedEvent{{Offset: 300, Event: events.Event{Topic: "x.y", Payload: json.RawMessage(`12`)}}},
		Activations:         map[string]int{"builder": 2, "planner": 1},
		Exhausted:           []string{"critic"},
		SeenTopics:          []string{"task.start", "build.start"},
		ConsecutiveFailures: 1, ConsecutiveMalformed: 2, MalformedTotal: 3, LastMalformed: 50,
		Blocked:  map[string]int{"build.done\ntests fail": 1},
		Rejected: 1, Commits: 2, TasksDone: 1, Accepted: 5,
		Usage:     events.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 30, CacheWriteTokens: 4},
		CostUSD:   0.1 + 0.2,
		StartedAt: fuzzNow, SegmentStart: fuzzNow.Add(time.Hour), LastEventAt: fuzzNow.In(paris),
		PriorRuntime: 90 * time.Minute,
		StartCommit:  "0123abcd", Baseline: map[string]bool{"tests pass": false},
		NoProgress: 1, Tried: []string{"builder"},
		RateLimitedUntil: fuzzNow.Add(2 * time.Hour),
		Confirming:       &claim, Completed: true, CompletedBy: runfiles.VerifiedBySpec, Cancelled: true,
		StillFailing: []string{"lint_clean"},
		Terminated:   &runfiles.Termination{Reason: runfiles.ReasonMaxIterations, ExitCode: 2, Message: "max", At: fuzzNow},
	}
	return s
}

// FuzzCheckpointLoad loads any bytes as state.json. Load either returns a
// usable state or says the file is corrupt, naming it, with nothing else;
// and a state it returns saves and loads back to the same bytes, so a
// resumed run neither loses nor invents anything.
func FuzzCheckpointLoad(f *testing.F) {
	dir := f.TempDir()
	seed := runfiles.Checkpoint{Path: filepath.Join(dir, "seed.json")}
	for _, s := range []*runfiles.RunState{fullRunState(), {RunID: "r", EventsFile: "e"}} {
		require.NoError(f, seed.Save(s, runfiles.PhaseRunning, fuzzNow))
		data, err := os.ReadFile(seed.Path)
		require.NoError(f, err)
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`"schema_version": 1`), []byte(`"schema_version": 2`), 1))
		f.Add(data[:len(data)/2])
	}
	for _, s := range []string{
		`{"schema_version":1,"run_id":"r","events_file":"e","offset":-1}`,
		`{"schema_version":1,"run_id":"r","events_file":"e","activations":null,"pending":[{"event":{"topic":"a","ts":"2024-01-01 00:00:00z","payload":{ "a" : 1 }}}]}`,
		`{"schema_version":1.0,"run_id":"r","events_file":"e","prior_runtime_ns":1e3}`,
		`{"schema_version":1} {"run_id":"second"}`,
		"",
	} {
		f.Add([]byte(s))
	}

	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		// A new name each time: rewriting one file costs more than the load
		// (ext4 flushes a truncated file on close).
		n++
		path := filepath.Join(dir, fmt.Sprintf("state-%d.json", n))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		defer func() { _ = os.Remove(path) }()

		st, phase, err := runfiles.Checkpoint{Path: path}.Load()
		if err != nil {
			var corrupt *runfiles.CorruptStateError
			require.True(t, errors.As(err, &corrupt), "an unusable state file is corrupt, not %T: %v", err, err)
			require.Equal(t, path, corrupt.Path)
			require.Nil(t, st, "no half-read state with an error")
			require.Empty(t, phase)
			return
		}
		require.NotNil(t, st)
		require.NotEmpty(t, st.RunID)
		require.NotEmpty(t, st.EventsFile)
		require.GreaterOrEqual(t, st.Offset, int64(0))
		require.NotNil(t, st.Activations, "Apply counts into it")
		require.NotNil(t, st.Blocked, "Apply counts into it")

		saved := runfiles.Checkpoint{Path: path + ".saved"}
		defer func() { _ = os.Remove(saved.Path) }()
		require.NoError(t, saved.Save(st, phase, fuzzNow), "a state that loads saves")
		first, err := os.ReadFile(saved.Path)
		require.NoError(t, err)
		again, againPhase, err := saved.Load()
		require.NoError(t, err, "a saved state loads:\n%s", first)
		require.Equal(t, phase, againPhase)
		require.NoError(t, saved.Save(again, againPhase, fuzzNow))
		second, err := os.ReadFile(saved.Path)
		require.NoError(t, err)
		require.Equal(t, string(first), string(second), "save, load, save gives the same file")
	})
}

// FuzzReadLockInfo reads any bytes as the holder information of a lock
// file. A refusal quotes it and its hint says which pid to kill, so a file
// that does not read whole must give no holder at all; one that reads
// comes back the same once the lock's writer has written it.
func FuzzReadLockInfo(f *testing.F) {
	written, err := json.Marshal(runfiles.LockInfo{RunID: "20261122-100000-ab12", PID: 4242, Host: "build-1",
		StartedAt: time.Date(2026, 11, 22, 11, 0, 0, 5, time.FixedZone("CET", 3600))})
	require.NoError(f, err)
	f.Add(append(written, '\n'))
	f.Add([]byte(`{"pid":4242,"host":7}`))
	f.Add([]byte(`{"pid":4242,"started_at":"yesterday"}`))
	f.Add([]byte(`{"pid":1e3}`))
	f.Add([]byte("\n"))
	f.Add([]byte{})

	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("loop-%d.lock", n))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		defer func() { _ = os.Remove(path) }()

		info, err := runfiles.ReadLockInfo(path)
		if err != nil {
			require.Equal(t, runfiles.LockInfo{}, info, "no half-read holder with an error")
			return
		}
		rewritten, err := json.Marshal(info)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(rewritten, '\n'), 0o644))
		again, err := runfiles.ReadLockInfo(path)
		require.NoError(t, err)
		require.True(t, info.StartedAt.Equal(again.StartedAt))
		info.StartedAt, again.StartedAt = time.Time{}, time.Time{}
		require.Equal(t, info, again)
	})
}

// FuzzTagsReachTheLog drives an agent's final text down the path its tags
// take: tagEvents turns them into events, which are appended in one batch
// with ralph's iteration.finished as collecting does, read back and decided
// as settling does. Whatever a tag holds, nothing on that path fails; every
// tag comes back as one event to decide; and its topic either validates and
// comes back unchanged, or is rejected as invalid_topic and counted as
// malformed.
func FuzzTagsReachTheLog(f *testing.F) {
	for _, s := range []string{
		`<event topic="build.done">tests pass</event>`,
		`<event topic="bad topic">p</event> <event topic="a..b">p</event> <event topic="build.*">p</event>`,
		`<event topic="über.done">p</event><event topic="a[1]"/>`,
		"<event topic=\"tab\there\" target=\"Builder\">\n  x\n</event>",
		"<event topic=\"\xff\xfe\">invalid UTF-8</event>",
		`<event topic='say"hi"' target="reviewer">x</event>`,
		`<event topic="loop.terminate">not yours</event><event topic="LOOP_COMPLETE">done</event>`,
		`<event topic="` + strings.Repeat("a", events.MaxTopicLen+1) + `">long</event>`,
	} {
		f.Add(s)
	}
	e := fuzzEngine(f)
	n := 0
	f.Fuzz(func(t *testing.T, text string) {
		n++
		e.iter.info = IterationInfo{N: n, Hat: e.hat("builder")}
		tags := events.ParseTags(text)
		lines := append(e.tagEvents(text), runfiles.RalphEvent(runfiles.TopicIterationFinished,
			runfiles.IterationFinishedRecord{Iteration: n, Hat: "builder", Outcome: runfiles.OutcomeSuccess}))
		malformed := e.st.MalformedTotal
		require.NoError(t, e.append(lines...), "appending an agent's tags never fails")
		require.Len(t, e.st.Undecided, len(tags), "each tag is read back as one event to decide")

		var b batch
		invalid := 0
		for i, u := range slices.Clone(e.st.Undecided) {
			require.Equal(t, events.SourceTag, u.Event.Source)
			valid := events.ValidateTopic(u.Event.Topic) == nil
			if valid {
				require.Equal(t, tags[i].Topic, u.Event.Topic, "a valid topic comes back as written")
			} else {
				invalid++
			}
			first := len(b.lines)
			e.decide(t.Context(), &b, u)
			require.Greater(t, len(b.lines), first, "every event gets a decision")
			var rej runfiles.RejectedRecord
			asInvalid := b.lines[first].Topic == runfiles.TopicEventRejected && runfiles.Decode(b.lines[first], &rej) &&
				rej.Reason == runfiles.RejectInvalidTopic
			require.Equal(t, !valid, asInvalid, "topic %q is rejected as invalid_topic exactly when it is invalid", u.Event.Topic)
		}
		require.Equal(t, malformed+invalid, e.st.MalformedTotal, "each invalid topic counts as malformed once")
		require.NoError(t, e.append(b.lines...))
		require.Empty(t, e.st.Undecided, "each decision is applied")
		e.st.Pending = e.st.Pending[:0] // accepted events are not the subject here
	})
}

// fuzzEngine is an engine with a run's log open and nothing else: enough
// to append, fold and decide without running agents or saving checkpoints.
func fuzzEngine(f *testing.F) *Engine {
	f.Helper()
	e := newTestEngine(f, f.TempDir(), &fakeBackend{}, settings())
	e.st = runfiles.NewRunState()
	e.st.EventsFile = filepath.Join(runfiles.DirName, "events-fuzz.jsonl")
	require.NoError(f, e.openLog(e.st.EventsFile, 0))
	return e
}

//go:build unix

package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, topic string
		want           bool
	}{
		{"loop.terminate", "loop.terminate", true},
		{"task.*", "task.failed", true},
		{"task.*", "taskx.failed", false},
		{"*.done", "build.done", true},
		{"*", "iteration.finished", true},
		{"*", "hook.ran", false},
		{"*.ran", "hook.ran", false},
		{"hook.ran", "hook.ran", true},
		{"hook.*", "hook.ran", true},
		{"hook.*", "hook.started", true},
		{"human.asked", "human.answered", false},
	}
	for _, c := range cases {
		t.Run(c.pattern+" "+c.topic, func(t *testing.T) {
			assert.Equal(t, c.want, Match(c.pattern, c.topic))
		})
	}
}

// memLog is the owner of a log, as the engine is: it appends lines with
// offsets and hands what it folds to the dispatcher.
type memLog struct {
	t     *testing.T
	d     *Dispatcher
	recs  []events.Record
	end   int64
	warns []string
	err   error
}

func (l *memLog) write(evs ...events.Event) []events.Record {
	var out []events.Record
	for _, ev := range evs {
		b, err := events.EncodeLine(ev)
		require.NoError(l.t, err)
		r := events.Record{Offset: l.end, Line: b[:len(b)-1], Event: ev}
		l.end += int64(len(b))
		l.recs = append(l.recs, r)
		out = append(out, r)
	}
	return out
}

// append writes lines and folds them: the dispatcher's appendLines.
func (l *memLog) append(evs ...events.Event) error {
	return l.fold(l.write(evs...))
}

func (l *memLog) fold(recs []events.Record) error {
	w, err := l.d.Fire(context.Background(), "run-1", recs, l.append)
	l.warns = append(l.warns, w...)
	if err != nil && l.err == nil {
		l.err = err
	}
	return nil
}

func (l *memLog) topics(topic string) []Result {
	var out []Result
	for _, r := range l.recs {
		if r.Event.Topic == topic {
			var res Result
			require.NoError(l.t, json.Unmarshal(r.Event.Payload, &res))
			out = append(out, res)
		}
	}
	return out
}

func ralphLine(topic string) events.Event {
	return events.Event{Topic: topic, Payload: json.RawMessage(`{"iteration":2,"hat":"builder"}`), Source: events.SourceRalph}
}

func countingHook(t *testing.T, name, file string, on ...string) Hook {
	return Hook{Name: name, On: on, Run: fmt.Sprintf(`cat >> %q`, file), Timeout: 10 * time.Second}
}

func lines(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestAHookRunsOncePerMatchingEventAndIsRecorded(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	d := New(Options{Workspace: dir, Hooks: []Hook{countingHook(t, "count", out, "iteration.*", "loop.terminate")}})
	l := &memLog{t: t, d: d}
	require.NoError(t, l.append(ralphLine("loop.started"), ralphLine("iteration.started")))
	require.NoError(t, l.append(ralphLine("iteration.finished"), ralphLine("loop.terminate")))

	got := lines(t, out)
	require.Len(t, got, 3)
	var ev events.Event
	require.NoError(t, json.Unmarshal([]byte(got[0]), &ev))
	assert.Equal(t, "iteration.started", ev.Topic)

	ran := l.topics(TopicRan)
	require.Len(t, ran, 3)
	assert.Equal(t, []string{"iteration.started", "iteration.finished", "loop.terminate"},
		[]string{ran[0].Topic, ran[1].Topic, ran[2].Topic})
	assert.Equal(t, 0, *ran[0].ExitCode)
	assert.Len(t, l.topics(TopicStarted), 3)
	assert.Empty(t, l.warns)
	require.NoError(t, l.err)
}

func TestFoldingTheSameLinesAgainRunsNothingTwice(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	hook := countingHook(t, "count", out, "*")
	first := &memLog{t: t, d: New(Options{Workspace: dir, Hooks: []Hook{hook}})}
	require.NoError(t, first.append(ralphLine("iteration.finished"), ralphLine("loop.terminate")))
	require.Len(t, lines(t, out), 2)

	// A resumed ralph folds the whole log again (its checkpoint was lost),
	// with a new dispatcher.
	again := &memLog{t: t, d: New(Options{Workspace: dir, Hooks: []Hook{hook}}), recs: first.recs, end: first.end}
	require.NoError(t, again.fold(first.recs))
	assert.Len(t, lines(t, out), 2, "no hook ran twice")
	assert.Len(t, again.recs, len(first.recs), "nothing was written")
}

func TestAHookCutOffByADeadRalphIsRecordedInterruptedNotRunAgain(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	hook := countingHook(t, "count", out, "loop.terminate")
	// The log a ralph killed while its hook ran leaves: the event and the
	// hook's hook.started, no hook.ran.
	dead := &memLog{t: t}
	trigger := dead.write(ralphLine("loop.terminate"))[0]
	dead.write(line(TopicStarted, startedRecord{Hook: "count", Offset: trigger.Offset, Topic: "loop.terminate"}))

	l := &memLog{t: t, d: New(Options{Workspace: dir, Hooks: []Hook{hook}}), recs: dead.recs, end: dead.end}
	require.NoError(t, l.fold(dead.recs))
	assert.Empty(t, lines(t, out), "the hook did not run again")
	ran := l.topics(TopicRan)
	require.Len(t, ran, 1)
	assert.True(t, ran[0].Interrupted)
	assert.Equal(t, trigger.Offset, ran[0].Offset)
	assert.Equal(t, "loop.terminate", ran[0].Topic)
}

func TestHooksDoNotTriggerThemselves(t *testing.T) {
	dir := t.TempDir()
	all, ran := filepath.Join(dir, "all"), filepath.Join(dir, "ran")
	d := New(Options{Workspace: dir, Hooks: []Hook{
		countingHook(t, "all", all, "*"),
		countingHook(t, "on-ran", ran, "hook.ran"),
		countingHook(t, "on-ran-too", filepath.Join(dir, "ran2"), "hook.*"),
	}})
	l := &memLog{t: t, d: d}
	require.NoError(t, l.append(ralphLine("loop.terminate")))
	assert.Len(t, lines(t, all), 1, "* does not see hook lines")
	// on-ran sees the hook.ran of "all" only: not its own, not on-ran-too's.
	got := lines(t, ran)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], `"hook":"all"`)
	assert.Len(t, l.topics(TopicRan), 3)
}

func TestAFailingHookWarnsOrFails(t *testing.T) {
	dir := t.TempDir()
	d := New(Options{Workspace: dir, Hooks: []Hook{
		{Name: "warner", On: []string{"x.y"}, Run: "echo nope >&2; exit 4"},
		{Name: "failer", On: []string{"x.y"}, Run: "exit 5", OnError: OnErrorFail},
	}})
	l := &memLog{t: t, d: d}
	require.NoError(t, l.append(ralphLine("x.y")))
	require.Len(t, l.warns, 1)
	assert.Contains(t, l.warns[0], "hook warner on x.y: exit status 4")
	var fe *FailedError
	require.ErrorAs(t, l.err, &fe)
	assert.Equal(t, "failer", fe.Result.Hook)
	assert.Equal(t, "hook failer failed on x.y: exit status 5", fe.Error())
	ran := l.topics(TopicRan)
	require.Len(t, ran, 2)
	assert.Equal(t, "nope\n", ran[0].Output)
	assert.Equal(t, 4, *ran[0].ExitCode)
}

func TestACommandGetsTheEventAndTheRalphVariables(t *testing.T) {
	dir := t.TempDir()
	h := Hook{Name: "env", On: []string{"*"}, Run: `cat; env | grep ^RALPH_ | sort`}
	ev := events.Event{Topic: "task.failed", Payload: json.RawMessage(`{"task":"t-1"}`), Source: events.SourceRalph}
	res := h.Fire(t.Context(), Trigger{Event: ev, Offset: 42, Workspace: dir, RunID: "r1", EventsFile: "/x/e.jsonl"})
	require.Empty(t, res.Error)
	for _, want := range []string{`"topic":"task.failed"`, "RALPH_EVENT_TOPIC=task.failed", "RALPH_EVENT_OFFSET=42",
		"RALPH_HOOK=env", "RALPH_RUN_ID=r1", "RALPH_TASK=t-1", "RALPH_WORKSPACE=" + dir, "RALPH_EVENTS_FILE=/x/e.jsonl"} {
		assert.Contains(t, res.Output, want)
	}
}

func TestAHungHookIsKilledWithItsGroupAtItsTimeout(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The shell and a background sleep both write their pid: the whole
	// group must go.
	h := Hook{Name: "hung", Run: fmt.Sprintf(`sleep 60 & echo $! > %q; echo $$ >> %q; sleep 60`, pids, pids), Timeout: time.Second}
	start := time.Now()
	res := h.Fire(t.Context(), Trigger{Event: ralphLine("x.y"), Workspace: dir})
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.True(t, res.TimedOut)
	assert.Equal(t, "timed out after 1s", res.Error)
	got := lines(t, pids)
	require.Len(t, got, 2)
	for _, p := range got {
		pid, err := strconv.Atoi(p)
		require.NoError(t, err)
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d is gone", pid)
	}
	pgid, _ := strconv.Atoi(got[1])
	assert.ErrorIs(t, syscall.Kill(-pgid, 0), syscall.ESRCH, "the group is gone")
}

func TestAPostSendsTheEvent(t *testing.T) {
	got := make(chan string, 1)
	srv := localServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("Content-Type") + " " + r.Header.Get("X-Ralph-Hook") + " " + string(b)
		_, _ = w.Write([]byte("thanks"))
	}))
	h := Hook{Name: "web", Post: srv.URL}
	res := h.Fire(t.Context(), Trigger{Event: ralphLine("loop.terminate"), Offset: 7})
	require.Empty(t, res.Error)
	assert.Equal(t, 200, res.Status)
	assert.Equal(t, "thanks", res.Output)
	body := <-got
	assert.True(t, strings.HasPrefix(body, "application/json web {"), body)
	assert.Contains(t, body, `"topic":"loop.terminate"`)
}

func TestAPostFailsOnAStatusOutside2xxAndOnItsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := localServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		http.Error(w, "broken", http.StatusBadGateway)
	}))
	t.Cleanup(func() { close(release) }) // before the server closes: cleanups run last first
	res := Hook{Name: "web", Post: srv.URL}.Fire(t.Context(), Trigger{Event: ralphLine("a.b")})
	assert.Equal(t, "HTTP 502 Bad Gateway", res.Error)
	assert.Equal(t, 502, res.Status)

	res = Hook{Name: "slow", Post: srv.URL + "/slow", Timeout: 200 * time.Millisecond}.Fire(t.Context(), Trigger{Event: ralphLine("a.b")})
	assert.True(t, res.TimedOut)
	assert.Equal(t, "timed out after 200ms", res.Error)
}

func TestAHookAnswersAQuestion(t *testing.T) {
	dir := t.TempDir()
	var asked []string
	d := New(Options{Workspace: dir, Hooks: []Hook{{Name: "oracle", On: []string{"human.asked"}, Run: `echo thinking; echo '{"answer": "use sqlite"}'`}},
		Answer: func(ws, id, text, by string) error {
			asked = append(asked, strings.Join([]string{ws, id, text, by}, "|"))
			return nil
		}})
	l := &memLog{t: t, d: d}
	q := events.Event{Topic: TopicHumanAsked, Payload: json.RawMessage(`{"id":"q-1","question":"which db?"}`), Source: events.SourceRalph}
	require.NoError(t, l.append(q))
	assert.Equal(t, []string{dir + "|q-1|use sqlite|hook oracle"}, asked)
	ran := l.topics(TopicRan)
	require.Len(t, ran, 1)
	assert.Equal(t, "q-1", ran[0].Answered)
}

func TestCheckCommandAndURL(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts/ok.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts/plain.sh"), []byte("#!/bin/sh\n"), 0o644))
	assert.NoError(t, CheckCommand(dir, "./scripts/ok.sh --flag"))
	assert.NoError(t, CheckCommand(dir, "sh -c 'true'"))
	assert.NoError(t, CheckCommand(dir, "$HOME/bin/x"))
	assert.EqualError(t, CheckCommand(dir, "./scripts/missing.sh"), "./scripts/missing.sh does not exist")
	assert.EqualError(t, CheckCommand(dir, "./scripts/plain.sh"), "./scripts/plain.sh is not executable (chmod +x ./scripts/plain.sh)")
	assert.EqualError(t, CheckCommand(dir, "no-such-program-xyz arg"), "no-such-program-xyz is not on PATH")
	assert.NoError(t, CheckURL("https://hooks.example.com/ralph"))
	assert.EqualError(t, CheckURL("ftp://x/y"), `"ftp://x/y" is not an http or https URL`)
	assert.EqualError(t, CheckURL("http:///path"), `"http:///path" has no host`)
}

// localServer is an httptest server on 127.0.0.1.
func localServer(t *testing.T, h http.Handler) *httptest.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// A hook's command as Windows reads it: no execute bit to ask for, and a
// path written with backslashes, which sh would read as escapes, refused
// with the path written with slashes. Table tests with goos, so they run
// on every system.
func TestCheckCommandOnWindows(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts", "plain.sh"), []byte("#!/bin/sh\n"), 0o644))
	cases := []struct {
		command, goos, want string // want is the error, "" for none
	}{
		{"./scripts/plain.sh", "windows", ""},
		{"./scripts/plain.sh", "linux", "./scripts/plain.sh is not executable (chmod +x ./scripts/plain.sh)"},
		{`.\scripts\plain.sh --flag`, "windows", `.\scripts\plain.sh: sh reads \ as an escape, not a path separator: write the path with / (./scripts/plain.sh)`},
		{`..\up.sh`, "windows", `..\up.sh: sh reads \ as an escape, not a path separator: write the path with / (../up.sh)`},
		{`C:\tools\notify.exe arg`, "windows", `C:\tools\notify.exe: sh reads \ as an escape, not a path separator: write the path with / (C:/tools/notify.exe)`},
		{`d:\x`, "linux", `d:\x: sh reads \ as an escape, not a path separator: write the path with / (d:/x)`},
		{`\ls -l`, "linux", ""}, // an escaped name: the shell's business
		{`a\ b`, "windows", ""}, // an escaped space
		{`1:\x`, "windows", ""}, // not a drive
	}
	for _, tc := range cases {
		t.Run(tc.goos+" "+tc.command, func(t *testing.T) {
			err := checkCommand(dir, tc.command, tc.goos)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
		})
	}
}

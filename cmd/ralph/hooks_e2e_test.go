//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hooks"
	"github.com/ralph-loop/ralph/runfiles"
)

// hookPosts is an HTTP server on 127.0.0.1 that records the "topic offset"
// of every event a post: hook sends it.
type hookPosts struct {
	url string
	mu  sync.Mutex
	got []string
}

func newHookPosts(t *testing.T) *hookPosts {
	p := &hookPosts{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev events.Event
		if json.NewDecoder(r.Body).Decode(&ev) != nil || ev.Topic != r.Header.Get("X-Ralph-Event-Topic") {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.got = append(p.got, ev.Topic+" "+r.Header.Get("X-Ralph-Event-Offset"))
		p.mu.Unlock()
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *hookPosts) received() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(slices.Values(p.got))
}

// hookRuns are the hook.ran records of the run's log, by hook.
func (w *workspace) hookRuns() map[string][]hooks.Result {
	out := map[string][]hooks.Result{}
	for _, r := range w.events() {
		if r.Event.Topic == hooks.TopicRan {
			var res hooks.Result
			require.NoError(w.t, json.Unmarshal(r.Event.Payload, &res))
			out[res.Hook] = append(out[res.Hook], res)
		}
	}
	return out
}

// hookTriggers are "topic offset" of the log's events a hook on topics
// fires on: ralph's lines, and an agent's once accepted (event.routed).
func (w *workspace) hookTriggers(topics ...string) []string {
	var out []string
	agent := map[int64]string{}
	for _, r := range w.events() {
		ev := r.Event
		switch {
		case ev.Source != events.SourceRalph:
			agent[r.Offset] = ev.Topic
		case ev.Topic == runfiles.TopicEventRouted:
			var routed struct{ Offset int64 }
			require.NoError(w.t, json.Unmarshal(ev.Payload, &routed))
			if slices.Contains(topics, agent[routed.Offset]) {
				out = append(out, fmt.Sprintf("%s %d", agent[routed.Offset], routed.Offset))
			}
		}
		if ev.Source == events.SourceRalph && slices.Contains(topics, ev.Topic) {
			out = append(out, fmt.Sprintf("%s %d", ev.Topic, r.Offset))
		}
	}
	slices.Sort(out)
	return out
}

// fileLines are the lines of a file, sorted; none when it does not exist.
func fileLines(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return slices.Sorted(strings.Lines(string(data)))
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// A command hook and a post hook fire once for each matching event, ralph's
// own lines and an agent's accepted one, even when ralph is killed at
// several points (some between a hook's hook.started and its hook.ran)
// and resumed each time.
func TestHooksFireOncePerEventAcrossKillsAndResumes(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	posts := newHookPosts(t)
	seen := filepath.Join(w.state, "hook.log")
	w.write("ralph.yml", twoHatConfig+agentCLI()+fmt.Sprintf(`hooks:
  - name: note
    on: [iteration.finished, loop.terminate, build.done]
    run: echo "$RALPH_EVENT_TOPIC $RALPH_EVENT_OFFSET" >> %s
  - name: web
    on: [iteration.*, loop.terminate]
    post: %s
    timeout_seconds: 5
`, seen, posts.url))
	w.script(twoHatScript())

	kills := 0
	for _, spec := range []string{"append.after:4", "append.after:9", "checkpoint.after:3", "append.after:17", "append.torn:6"} {
		r := w.ralphKilledAt(spec, w.hasRun())
		if !r.killed {
			require.Equal(t, 0, r.code, "kill point %s: %s", spec, r.stderr)
			break // the run completed before the kill point came
		}
		kills++
	}
	if !w.completedInLog() {
		r := w.ralph("loop", "--resume")
		require.Equal(t, 0, r.code, r.stderr)
	}
	require.GreaterOrEqual(t, kills, 3)

	runs := w.hookRuns()
	noteWant := w.hookTriggers("iteration.finished", "loop.terminate", "build.done")
	webWant := w.hookTriggers("iteration.started", "iteration.finished", "iteration.settled", "loop.terminate")
	require.NotEmpty(t, noteWant)
	assert.Contains(t, strings.Join(noteWant, ","), "build.done ", "the agent's accepted event fired the hook")
	for hook, want := range map[string][]string{"note": noteWant, "web": webWant} {
		var ran, interrupted []string
		for _, res := range runs[hook] {
			k := fmt.Sprintf("%s %d", res.Topic, res.Offset)
			ran = append(ran, k)
			if res.Interrupted {
				interrupted = append(interrupted, k)
			} else {
				assert.Empty(t, res.Error, "hook %s on %s", hook, k)
			}
		}
		slices.Sort(ran)
		assert.Equal(t, want, ran, "hook %s: one hook.ran for each matching event", hook)
		var done []string
		for _, k := range want {
			if !slices.Contains(interrupted, k) {
				done = append(done, k)
			}
		}
		got := posts.received()
		if hook == "note" {
			got = trimmed(fileLines(t, seen))
		}
		assert.Equal(t, done, got, "hook %s ran once for each event, and not again after an interruption", hook)
	}
}

// A hook that is running when ralph dies is not run again on --resume: its
// hook.ran says it was interrupted. Here the hook itself kills ralph the
// first time it runs.
func TestAHookCutOffByAKillIsRecordedInterruptedAndNotRunAgain(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	seen, marker := filepath.Join(w.state, "hook.log"), filepath.Join(w.state, "killed")
	w.write("ralph.yml", twoHatConfig+agentCLI()+fmt.Sprintf(`hooks:
  - on: [iteration.finished]
    run: 'if [ ! -e %[2]s ]; then touch %[2]s; kill -9 $PPID; sleep 30; fi; echo "$RALPH_EVENT_OFFSET" >> %[1]s'
`, seen, marker))
	w.script(twoHatScript())

	r := w.ralph("loop")
	require.NotEqual(t, 0, r.code, "the hook killed ralph: %s", r.stderr)
	require.FileExists(t, marker)
	require.NotContains(t, r.stderr, "completed")
	r = w.ralph("loop", "--resume")
	require.Equal(t, 0, r.code, r.stderr)

	runs := w.hookRuns()["hook-1"]
	finished := w.hookTriggers("iteration.finished")
	require.Len(t, runs, len(finished))
	require.True(t, runs[0].Interrupted, "the first run was cut off: %+v", runs[0])
	for _, f := range finished {
		n, err := strconv.ParseInt(strings.Fields(f)[1], 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, runs[0].Offset, "the cut-off run was on the first iteration.finished")
	}
	var offsets []string
	for _, res := range runs[1:] {
		assert.False(t, res.Interrupted)
		offsets = append(offsets, strconv.FormatInt(res.Offset, 10))
	}
	assert.Equal(t, slices.Sorted(slices.Values(offsets)), trimmed(fileLines(t, seen)),
		"every later iteration ran the hook once; the cut-off one not again")
}

// A hook that hangs is killed with its whole process group at its
// timeout_seconds; ralph warns and the run goes on to complete.
func TestAHungHookIsKilledAtItsTimeoutAndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	pid := filepath.Join(w.state, "pid")
	w.write("ralph.yml", twoHatConfig+agentCLI()+fmt.Sprintf(`hooks:
  - name: hung
    on: [loop.started]
    run: sleep 60 & echo $! > %s; sleep 60
    timeout_seconds: 1
`, pid))
	w.script(twoHatScript())

	start := time.Now()
	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Contains(t, r.stderr, "hook hung on loop.started: timed out after 1s")
	runs := w.hookRuns()["hung"]
	require.Len(t, runs, 1)
	assert.True(t, runs[0].TimedOut)
	n, err := strconv.Atoi(strings.TrimSpace(w.readAbs(pid)))
	require.NoError(t, err)
	assert.ErrorIs(t, syscall.Kill(n, 0), syscall.ESRCH, "the hook's background sleep was killed with its group")
	assert.Equal(t, "terminate completed", last(w.flow()))
}

// A hook with on_error: fail that fails ends the run as fatal, exit 3,
// with a loop.terminate that names the hook.
func TestAFailingHookWithOnErrorFailEndsTheRun(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI()+`hooks:
  - name: gate
    on: [iteration.finished]
    run: echo "no deploys today" >&2; exit 7
    on_error: fail
`)
	w.script(twoHatScript())

	r := w.ralph("loop")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "hook gate failed on iteration.finished: exit status 7")
	assert.Equal(t, 1, w.iterationsRun(), "the run ended after the first iteration")
	recs := w.events()
	var term struct{ Reason, Message string }
	require.NoError(t, json.Unmarshal(recs[len(recs)-1].Event.Payload, &term))
	assert.Equal(t, runfiles.TopicLoopTerminate, recs[len(recs)-1].Event.Topic)
	assert.Equal(t, "fatal", term.Reason)
	assert.Contains(t, term.Message, "hook gate failed")
	runs := w.hookRuns()["gate"]
	require.Len(t, runs, 1)
	assert.Equal(t, "no deploys today\n", runs[0].Output)
}

// A hook on task.* fires for the autopilot's task events, with the task's
// id in RALPH_TASK. (The task's loop runs the same hooks on its own log,
// where task.start has no RALPH_TASK.)
func TestAnAutopilotHookFiresOnTaskEvents(t *testing.T) {
	t.Parallel()
	w := newAutopilotRepo(t, "  source: tk\n")
	seen := filepath.Join(w.state, "hook.log")
	w.write("ralph.yml", w.read("ralph.yml")+fmt.Sprintf(`hooks:
  - on: [task.*]
    run: echo "$RALPH_EVENT_TOPIC $RALPH_TASK" >> %s
  - name: broken
    on: [autopilot.notice, all.done]
    run: exit 1
`, seen))
	git(t, w.dir, "commit", "-qam", "hooks")
	w.script(taskAgent("0"))
	id := w.run("tk", "create", "Task one", "-d", "Do one")

	r := w.ralph("autopilot")
	require.Equal(t, 0, r.code, r.stderr)
	got := trimmed(fileLines(t, seen))
	for _, topic := range []string{"task.assigned", "task.running", "task.finished", "task.completed"} {
		assert.Contains(t, got, topic+" "+id)
	}
	var withTask, ran int
	for _, l := range got {
		if strings.HasSuffix(l, " "+id) {
			withTask++
		}
	}
	recs, err := events.NewReader(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile), 0).Read()
	require.NoError(t, err)
	for _, r := range recs {
		if r.Event.Topic == hooks.TopicRan && strings.Contains(string(r.Event.Payload), `"hook":"hook-1"`) {
			ran++
		}
	}
	assert.Equal(t, withTask, ran, "one hook.ran in the autopilot's log for each run on its events")
	assert.Contains(t, r.stdout+r.stderr, "warning: hook broken on all.done: exit status 1",
		"a failing hook is a notice, which does not fire hooks in turn")
}

// ralph validate reports a hook's missing command, bad URL and unknown
// topic at file:line.
func TestValidateChecksHooks(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("scripts/notify.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(filepath.Join(w.dir, "scripts/notify.sh"), 0o755))
	w.write("ralph.yml", twoHatConfig+agentCLI()+`hooks:
  - on: [loop.terminate, build.done, task.failed, human.asked]
    run: ./scripts/notify.sh
  - on: [biuld.done]
    run: ./scripts/missing.sh
  - on: [loop.terminate]
    post: ftp://example.com/x
`)
	r := w.ralph("validate")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, `ralph.yml:21: hook hook-2: on: no event has the topic "biuld.done"`)
	assert.Contains(t, r.stderr, "ralph.yml:22: hook hook-2: run: ./scripts/missing.sh does not exist")
	assert.Contains(t, r.stderr, `ralph.yml:23: hook hook-3: post: "ftp://example.com/x" is not an http or https URL`)
	assert.NotContains(t, r.stderr, "hook-1")
}

func (w *workspace) readAbs(path string) string {
	w.t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(w.t, err)
	return string(data)
}

// A hook on human.asked that prints {"answer": "…"} answers the question:
// the run does not wait for a person, and the asking hat gets the answer.
func TestAHookAnswersAQuestion(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.askWorkspace(`hooks:
  - name: oracle
    on: [human.asked]
    run: |
      echo "thinking it over"
      echo '{"answer": "sqlite, it is small"}'
`, "")

	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, w.prompt(3), `"answer": "sqlite, it is small"`)
	runs := w.hookRuns()["oracle"]
	require.Len(t, runs, 1)
	assert.NotEmpty(t, runs[0].Answered)
	assert.Equal(t, 1, w.count("human.answered"))
	var answered struct{ By string }
	for _, r := range w.events() {
		if r.Event.Topic == "human.answered" {
			require.NoError(t, json.Unmarshal(r.Event.Payload, &answered))
		}
	}
	assert.Equal(t, "hook oracle", answered.By)
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The tests of `ralph serve` run it on a free loopback port beside a real
// loop or autopilot driven by the scripted agent, and compare what the
// API says with what the command line says of the same workspace.

// server is a running `ralph serve` and how to reach it.
type server struct {
	t     *testing.T
	url   string // http://127.0.0.1:PORT
	token string
	cmd   *exec.Cmd
	// stderr is what it says; stopped that it has been stopped.
	stderr  *lockedWriter
	stopped bool
	out     *lockedWriter // every line it printed
}

// stdout is what ralph serve printed; it waits for a line when there is
// none yet.
func (s *server) stdout() string {
	waitFor(s.t, "ralph serve's next line", func() bool { return s.out.String() != "" })
	return s.out.String()
}

// listening is the line ralph serve prints once it listens on one
// address; pageAddress each address it names when it listens on every
// interface.
var (
	listening   = regexp.MustCompile(`^ralph serve: listening on (http://[^/]+)/#token=([0-9a-f]+)$`)
	pageAddress = regexp.MustCompile(`^ralph serve: open the page at (http://[^/]+)/\?token=([0-9a-f]+)#token=[0-9a-f]+$`)
)

// startServe starts `ralph serve -C dir --addr 127.0.0.1:0` and waits for
// its address. At the test's end it is interrupted, and must end cleanly.
func startServe(t *testing.T, dir string, flags ...string) *server {
	t.Helper()
	return startServeOn(t, dir, "127.0.0.1:0", flags...)
}

// startServeOn is startServe listening on addr.
func startServeOn(t *testing.T, dir, addr string, flags ...string) *server {
	t.Helper()
	cmd := exec.Command(ralphBin, append([]string{"serve", "-C", dir, "--addr", addr}, flags...)...)
	cmd.Env = serveEnv()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	s := &server{t: t, cmd: cmd, stderr: stderr, out: &lockedWriter{}}
	lines := bufio.NewScanner(stdout)
	for s.url == "" && lines.Scan() {
		_, _ = s.out.Write([]byte(lines.Text() + "\n"))
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			s.url, s.token = m[1], m[2]
		} else if m := pageAddress.FindStringSubmatch(lines.Text()); m != nil {
			s.url, s.token = m[1], m[2]
		}
	}
	require.NotEmpty(t, s.url, "ralph serve printed no address: %s", stderr.String())
	go func() {
		// The scanner may have read past the address already.
		for lines.Scan() {
			_, _ = s.out.Write([]byte(lines.Text() + "\n"))
		}
	}()
	t.Cleanup(s.stop)
	if token, err := os.ReadFile(filepath.Join(dir, ".ralph", "serve.token")); err == nil {
		assert.Equal(t, s.token, strings.TrimSpace(string(token)))
	} else {
		assert.NoDirExists(t, filepath.Join(dir, ".ralph"), "a workspace without .ralph/ keeps its token outside it")
	}
	return s
}

// serveEnv is ralph serve's environment in the tests: the tokens of
// workspaces without .ralph/ go to a cache directory of the tests', not
// the user's.
func serveEnv() []string {
	return append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(filepath.Dir(ralphBin), "cache"))
}

// stop interrupts ralph serve, which must end cleanly, its streams with it.
func (s *server) stop() { s.stopWith(syscall.SIGINT) }

// stopWith is stop by sig.
func (s *server) stopWith(sig syscall.Signal) {
	if s.stopped {
		return
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(sig)
	assert.NoError(s.t, s.cmd.Wait(), "ralph serve ends cleanly on %s: %s", sig, s.stderr.String())
}

// do sends a request, with the token when withToken, and returns the
// status and body.
func (s *server) do(method, path string, withToken bool, body string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	require.NoError(s.t, err)
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, string(data)
}

// getJSON GETs path and decodes its 200 answer into v.
func (s *server) getJSON(path string, v any) {
	s.t.Helper()
	code, body := s.do(http.MethodGet, path, false, "")
	require.Equal(s.t, http.StatusOK, code, "GET %s: %s", path, body)
	require.NoError(s.t, json.Unmarshal([]byte(body), v), body)
}

// post POSTs with the token and returns the answer's message.
func (s *server) post(path, body string) string {
	s.t.Helper()
	code, out := s.do(http.MethodPost, path, true, body)
	require.Equal(s.t, http.StatusOK, code, "POST %s: %s", path, out)
	var m struct{ Message string }
	require.NoError(s.t, json.Unmarshal([]byte(out), &m))
	return m.Message
}

// apiEventLines is what GET /api/events lists, as the log's lines, one a
// line, as `ralph events --json` prints them.
func (s *server) apiEventLines(query string) string {
	s.t.Helper()
	var list struct {
		Log    string
		Events []struct{ Event json.RawMessage }
	}
	s.getJSON("/api/events?"+query, &list)
	var b strings.Builder
	for _, e := range list.Events {
		b.Write(e.Event)
		b.WriteByte('\n')
	}
	return b.String()
}

// assertEventsAsCLI compares /api/events?query with `ralph events --json`
// with the same flags, byte for byte.
func assertEventsAsCLI(t *testing.T, w *workspace, s *server, query string, flags ...string) {
	t.Helper()
	r := w.ralph(append([]string{"events", "--json"}, flags...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotEmpty(t, r.stdout, "ralph events %v lists something", flags)
	assert.Equal(t, r.stdout, s.apiEventLines(query), "/api/events?%s is ralph events --json %v", query, flags)
}

// timeless is a status's JSON without what depends on the time it was read.
func timeless(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v), string(data))
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "elapsed")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(v)
	return v
}

// assertStatusAsCLI compares /api/status's kind and inner object with the
// command's --json.
func assertStatusAsCLI(t *testing.T, w *workspace, s *server, kind string, args ...string) {
	t.Helper()
	r := w.ralph(args...)
	require.Equal(t, 0, r.code, r.stderr)
	var st map[string]json.RawMessage
	s.getJSON("/api/status", &st)
	assert.JSONEq(t, `"`+kind+`"`, string(st["kind"]))
	assert.Equal(t, timeless(t, []byte(r.stdout)), timeless(t, st[kind]), "/api/status is %v", args)
}

// sseEvent is one event of a Server-Sent Events stream.
type sseEvent struct{ id, name, data string }

// eventStream reads a Server-Sent Events stream.
type eventStream struct {
	t      *testing.T
	body   io.ReadCloser
	lines  *bufio.Scanner
	cancel context.CancelFunc
}

// stream opens path as a stream, resuming after lastID when not "".
func (s *server) stream(path, lastID string) *eventStream {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+path, nil)
	require.NoError(s.t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	require.Equal(s.t, "text/event-stream", resp.Header.Get("Content-Type"))
	es := &eventStream{t: s.t, body: resp.Body, lines: bufio.NewScanner(resp.Body), cancel: cancel}
	es.lines.Buffer(nil, 4<<20)
	s.t.Cleanup(es.close)
	return es
}

// close drops the connection, as a client that goes away does.
func (es *eventStream) close() {
	es.cancel()
	_ = es.body.Close()
}

// next is the stream's next event; comments (keepalives) are skipped.
func (es *eventStream) next() sseEvent {
	es.t.Helper()
	var ev sseEvent
	for es.lines.Scan() {
		line := es.lines.Text()
		switch {
		case line == "" && ev.name != "":
			return ev
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && ev.data != "":
			ev.data += "\n" + strings.TrimPrefix(line, "data: ") // as EventSource joins them
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	require.FailNow(es.t, "the stream ended", "%v", es.lines.Err())
	return ev
}

// ends reads the stream to its end, which must come without an event.
func (es *eventStream) ends() {
	es.t.Helper()
	for es.lines.Scan() {
		line := es.lines.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		ev := []string{line}
		for es.lines.Scan() && es.lines.Text() != "" {
			ev = append(ev, es.lines.Text())
		}
		require.FailNow(es.t, "nothing but keepalives before the end", "%s", strings.Join(ev, "\n"))
	}
	assert.NoError(es.t, es.lines.Err(), "the server ends the stream, the client does not cut it")
}

// until reads events until one's data contains s, and returns them all.
func (es *eventStream) until(s string) []sseEvent {
	es.t.Helper()
	var got []sseEvent
	for {
		ev := es.next()
		got = append(got, ev)
		if strings.Contains(ev.data, s) {
			return got
		}
	}
}

// untilLoopOver reads a dashboard stream until its loop has ended and no
// process runs it any more, and returns that event. A loop records its end
// and then frees its lock: on a busy machine the stream sends the two
// apart, and only the second is the last it sends.
func (es *eventStream) untilLoopOver() sseEvent {
	es.t.Helper()
	for {
		ev := es.next()
		var d struct {
			Loop *struct {
				Running bool
				Ended   json.RawMessage
			}
		}
		require.NoError(es.t, json.Unmarshal([]byte(ev.data), &d), ev.data)
		if d.Loop != nil && d.Loop.Ended != nil && !d.Loop.Running {
			return ev
		}
	}
}

// streamedLog is the log's events as a stream sends them: id and line.
func streamedLog(t *testing.T, path string) []sseEvent {
	t.Helper()
	recs, err := events.NewReader(path, 0).Read()
	require.NoError(t, err)
	var out []sseEvent
	for _, r := range recs {
		out = append(out, sseEvent{id: strconv.FormatInt(r.End(), 10), name: "event", data: string(r.Line)})
	}
	return out
}

func TestServeALoop(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.askWorkspace("", "")
	loop, stderr := w.startRalph("loop")
	// serve starts once the loop has made .ralph/, so where its token goes
	// does not depend on which of the two got there first.
	waitForQuestion(t, stderr)
	s := startServe(t, w.dir)

	// Reads: what the command line says, in JSON.
	assertStatusAsCLI(t, w, s, "loop", "status", "--json")
	assertEventsAsCLI(t, w, s, "", []string{}...)
	assertEventsAsCLI(t, w, s, "topic=human.*", "--topic", "human.*")
	assertEventsAsCLI(t, w, s, "hat=builder", "--hat", "builder")
	assertEventsAsCLI(t, w, s, "iteration=2&topic=iteration.*", "--iteration", "2", "--topic", "iteration.*")
	assertEventsAsCLI(t, w, s, "last=3", "--last", "3")
	assertEventsAsCLI(t, w, s, "since=1h&hat=ralph", "--since", "1h", "--hat", "ralph")
	var dash struct {
		Kind string
		Loop struct {
			Phase    string
			Question struct{ ID, Question string }
			Hats     []string
			Graph    struct{ Nodes []struct{ ID string } }
		}
	}
	s.getJSON("/api/dashboard", &dash)
	assert.Equal(t, "loop", dash.Kind)
	assert.Equal(t, "Which database?", dash.Loop.Question.Question)
	assert.NotEmpty(t, dash.Loop.Graph.Nodes, "the dashboard has the hats' graph")
	var its []struct {
		Iteration int
		Hat       string
		Outcome   string
	}
	s.getJSON("/api/iterations", &its)
	require.Len(t, its, 2)
	assert.Equal(t, "ralph", its[0].Hat)
	assert.Equal(t, "builder", its[1].Hat)
	assert.Equal(t, "success", its[1].Outcome)
	code, body := s.do(http.MethodGet, "/api/events?topic=a%20b", false, "")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `"hint":`)
	code, _ = s.do(http.MethodGet, "/api/events?run=nope", false, "")
	assert.Equal(t, http.StatusNotFound, code)

	// Both streams, connected while the run waits.
	dashboards := s.stream("/api/dashboard/stream", "")
	assert.Contains(t, dashboards.next().data, "Which database?")
	first := s.stream("/api/events/stream", "")
	var got []sseEvent
	for range 4 {
		got = append(got, first.next())
	}
	first.close() // mid-run: the client goes away

	// Without the token the answer is refused, and nothing changes.
	logFile := strings.TrimSpace(w.read(".ralph/current-events"))
	before := w.read(logFile)
	code, body = s.do(http.MethodPost, "/api/answer", false, `{"text": "postgres"}`)
	assert.Equal(t, http.StatusUnauthorized, code, body)
	code, _ = s.do(http.MethodPost, "/api/answer", false, `{"text": "postgres"}`)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, before, w.read(logFile))
	code, body = s.do(http.MethodPost, "/api/answer", true, `{"id": "q-nope", "text": "postgres"}`)
	assert.Equal(t, http.StatusConflict, code, body)
	assert.Contains(t, body, "answer the pending question with")

	msg := s.post("/api/answer", `{"text": "postgres, please"}`)
	assert.Contains(t, msg, "the run goes on with its next iteration")
	require.NoError(t, loop.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), "answered by api: postgres, please")
	assert.Equal(t, "dashboard", dashboards.untilLoopOver().name)

	// Reconnected after the last id it got, the stream sends the rest:
	// every line of the log once, in order, each id where the next starts.
	again := s.stream("/api/events/stream", got[len(got)-1].id)
	got = append(got, again.until(`"topic":"loop.terminate"`)...)
	assert.Equal(t, streamedLog(t, filepath.Join(w.dir, logFile)), got)

	// Once the run is over: its runs and a stop with nothing to stop.
	r := w.ralph("events", "--runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []json.RawMessage
	s.getJSON("/api/runs", &runs)
	var cliRuns bytes.Buffer
	for _, run := range runs {
		cliRuns.Write(run)
		cliRuns.WriteByte('\n')
	}
	assert.Equal(t, r.stdout, cliRuns.String())
	code, body = s.do(http.MethodPost, "/api/stop", true, `{"now": true}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "no loop is running")
	assertStatusAsCLI(t, w, s, "loop", "status", "--json")

	// Interrupted, ralph serve ends its streams and exits 0.
	open := s.stream("/api/events/stream?last=1", "")
	assert.Contains(t, open.next().data, `"topic":"loop.terminate"`)
	s.stop()
	open.ends()
	dashboards.ends()
}

func TestServeATwoSlotAutopilot(t *testing.T) {
	t.Parallel()
	w := newHeldAutopilot(t)
	s := startServe(t, w.dir)
	cmd, stderr := w.startRalph("autopilot")
	awaitHeldTasks(t, w)

	// The autopilot's log says both run: it holds still until release.
	waitFor(t, "both tasks running", func() bool {
		return len(countTopic(autopilotEvents(t, w), runfiles.TopicTaskRunning)) == 2
	})
	assertStatusAsCLI(t, w, s, "autopilot", "autopilot", "status", "--json")
	assertEventsAsCLI(t, w, s, "autopilot=true", "--autopilot")
	assertEventsAsCLI(t, w, s, "autopilot=1&topic=task.*", "--autopilot", "--topic", "task.*")
	assertEventsAsCLI(t, w, s, "task=two", "--task", "two")
	assertEventsAsCLI(t, w, s, "task=one&topic=iteration.started", "--task", "one", "--topic", "iteration.started")
	var dash struct {
		Kind      string
		Autopilot struct{ Running bool }
		Slots     []struct{ Task string }
		Selected  string
		Loop      struct{ Hat string }
	}
	s.getJSON("/api/dashboard?task=two", &dash)
	assert.Equal(t, "autopilot", dash.Kind)
	assert.True(t, dash.Autopilot.Running)
	require.Len(t, dash.Slots, 2)
	assert.Equal(t, "two", dash.Selected)
	var its []json.RawMessage
	s.getJSON("/api/iterations?task=one", &its)
	assert.Empty(t, its, "the task's first iteration has not finished")
	code, _ := s.do(http.MethodGet, "/api/events?task=nine", false, "")
	assert.Equal(t, http.StatusNotFound, code)

	// Pause and resume, without and with the token, seen in the
	// autopilot's events as they stream.
	dashboards := s.stream("/api/dashboard/stream?task=two", "")
	first := dashboards.next()
	assert.Equal(t, "dashboard", first.name)
	assert.Contains(t, first.data, `"selected":"two"`)
	stream := s.stream("/api/events/stream?autopilot=true&topic=autopilot.*", "")
	assert.Contains(t, stream.next().data, `"topic":"autopilot.started"`)
	before := w.read(".ralph/" + runfiles.AutopilotEventsFile)
	for _, path := range []string{"/api/pause", "/api/resume", "/api/stop"} {
		code, body := s.do(http.MethodPost, path, false, "")
		assert.Equal(t, http.StatusUnauthorized, code, body)
	}
	assert.Equal(t, before, w.read(".ralph/"+runfiles.AutopilotEventsFile), "refused requests change nothing")
	assert.NoFileExists(t, filepath.Join(w.dir, ".ralph", "autopilot-control"))

	assert.Contains(t, s.post("/api/pause", ""), "to pause")
	assert.Contains(t, stream.next().data, `"topic":"autopilot.paused"`)
	waitFor(t, "/api/status to say paused", func() bool {
		var st struct{ Autopilot struct{ Paused bool } }
		s.getJSON("/api/status", &st)
		return st.Autopilot.Paused
	})
	dashboards.until(`"paused":true`)
	assert.Contains(t, s.post("/api/resume", ""), "to resume")
	assert.Contains(t, stream.next().data, `"topic":"autopilot.resumed"`)

	// Stop: the autopilot finishes its running tasks and starts no other.
	assert.Contains(t, s.post("/api/stop", `{"now": false}`), "to stop")
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	require.Equal(t, 0, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Contains(t, stream.until(`"topic":"autopilot.stopped"`)[0].data, "autopilot.")
	assert.Contains(t, w.read("TODO.md"), "- [ ] Three", "no task starts after the stop")
	assertStatusAsCLI(t, w, s, "autopilot", "autopilot", "status", "--json")
}

func TestServeOffLoopbackNeedsTheTokenForEverything(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	s := startServeOn(t, w.dir, "0.0.0.0:0")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	require.NoError(t, err, s.url)
	s.url = "http://127.0.0.1:" + port
	for _, path := range []string{"/", "/api/status", "/api/openapi.json", "/api/dashboard/stream"} {
		code, body := s.do(http.MethodGet, path, false, "")
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %s", path, body)
		code, _ = s.do(http.MethodGet, path+"?token=nope", false, "")
		assert.Equal(t, http.StatusUnauthorized, code, path)
	}
	var st struct{ Kind string }
	code, body := s.do(http.MethodGet, "/api/status", true, "")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	assert.Equal(t, "none", st.Kind)
	code, body = s.do(http.MethodGet, "/?token="+s.token, false, "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<html")
	assert.Contains(t, s.stdout(), "/?token="+s.token+"#token="+s.token, "it prints the address a browser opens")
	assert.Empty(t, git(t, w.dir, "status", "--porcelain", "--ignored=no"), "the token stays out of git")

	dashboards := s.stream("/api/dashboard/stream?token="+s.token, "")
	assert.Contains(t, dashboards.next().data, `"kind":"none"`)
	s.stopWith(syscall.SIGTERM)
	dashboards.ends()
}

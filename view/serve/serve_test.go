package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

const testToken = "s3cret-token"

// newWorkspace is a workspace whose current run's log holds n events
// build.0 … build.n-1; it returns the workspace and the log's path.
func newWorkspace(t *testing.T, n int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, runfiles.DirName, "events-20261125-000000.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
	for i := range n {
		appendEvent(t, log, fmt.Sprintf("build.%d", i))
	}
	return dir, log
}

func appendEvent(t *testing.T, log, topic string) {
	t.Helper()
	require.NoError(t, events.AppendTo(log, events.Event{Topic: topic, Source: events.SourceAgent, Payload: events.StringPayload(topic)}))
}

func startServer(t *testing.T, dir string, everyRequest bool) *httptest.Server {
	t.Helper()
	h := NewHandler(dir, testToken, everyRequest, nil)
	h.keepalive = 50 * time.Millisecond
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func request(t *testing.T, method, url, token string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(data)
}

// snapshot is every file under dir and its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	}))
	return files
}

func TestPostsWithoutTheTokenAreRefusedAndChangeNothing(t *testing.T) {
	dir, _ := newWorkspace(t, 2)
	srv := startServer(t, dir, false)
	before := snapshot(t, dir)
	for _, path := range []string{"/api/stop", "/api/pause", "/api/resume", "/api/answer"} {
		for _, token := range []string{"", "wrong", testToken + "x"} {
			resp, body := request(t, http.MethodPost, srv.URL+path, token, `{"now": true, "text": "yes"}`)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with %q", path, token)
			assert.Equal(t, `Bearer realm="ralph"`, resp.Header.Get("WWW-Authenticate"))
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Contains(t, e.Hint, "Authorization: Bearer")
		}
	}
	assert.Equal(t, before, snapshot(t, dir))

	// With the token, the request is made: no loop runs, so it says so.
	resp, body := request(t, http.MethodPost, srv.URL+"/api/stop", testToken, "")
	assert.Equal(t, http.StatusConflict, resp.StatusCode, body)
	assert.Contains(t, body, "no loop is running")
	assert.Contains(t, body, `"hint":`)
	// Reads need no token on loopback.
	resp, body = request(t, http.MethodGet, srv.URL+"/api/status", "", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
}

func TestOffLoopbackEveryRequestNeedsTheToken(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	srv := startServer(t, dir, true)
	for _, path := range []string{"/", "/api/status", "/api/events", "/api/events/stream", "/api/openapi.json", "/nothing"} {
		resp, _ := request(t, http.MethodGet, srv.URL+path, "", "")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		resp, _ = request(t, http.MethodGet, srv.URL+path+"?token=wrong", "", "")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}
	resp, body := request(t, http.MethodGet, srv.URL+"/api/status", testToken, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, body = request(t, http.MethodGet, srv.URL+"/?token="+testToken, "", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	// The browser that loaded the page so brings the token to its assets
	// and the API's GETs as a cookie, but not to a POST.
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	assert.True(t, cookies[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
	withCookie := func(method, path string) int {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		req.AddCookie(cookies[0])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, withCookie(http.MethodGet, "/api/status"))
	assert.Equal(t, http.StatusOK, withCookie(http.MethodGet, "/api/openapi.json"))
	assert.Equal(t, http.StatusUnauthorized, withCookie(http.MethodPost, "/api/pause"))
	cookies[0].Value = "wrong"
	assert.Equal(t, http.StatusUnauthorized, withCookie(http.MethodGet, "/api/status"))
	// The query's token is for a browser's first load, not for requests.
	resp, _ = request(t, http.MethodPost, srv.URL+"/api/pause?token="+testToken, "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestOtherMethodsAreNotAllowedAndThereIsNoCORS(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	srv := startServer(t, dir, false)
	cases := []struct{ method, path, allow string }{
		{http.MethodDelete, "/api/status", "GET"},
		{http.MethodPut, "/api/events", "GET"},
		{http.MethodGet, "/api/stop", "POST"},
		{http.MethodOptions, "/api/pause", "POST"},
		{http.MethodPatch, "/", "GET"},
		{http.MethodOptions, "/api/status", "GET"},
	}
	for _, c := range cases {
		req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", "https://elsewhere.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", c.method, c.path)
		assert.Equal(t, c.allow, resp.Header.Get("Allow"))
		assert.Contains(t, string(body), `"hint":`)
		for name := range resp.Header {
			assert.NotContains(t, strings.ToLower(name), "access-control", "%s %s", c.method, c.path)
		}
	}
	// A GET route does not answer HEAD: a stream's would stay open.
	for _, path := range []string{"/api/events/stream", "/"} {
		resp, _ := request(t, http.MethodHead, srv.URL+path, "", "")
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
		assert.Equal(t, "GET", resp.Header.Get("Allow"), path)
	}
	resp, body := request(t, http.MethodGet, srv.URL+"/api/nothing", "", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, body, "openapi.json")
	// Nothing is redirected to a cleaner path, as a mux would.
	for _, path := range []string{"/api", "/api/status/", "/api//status"} {
		code, body := rawGet(t, strings.TrimPrefix(srv.URL, "http://"), path)
		assert.Equal(t, http.StatusNotFound, code, path)
		assert.Contains(t, body, `"hint":`, path)
	}
}

// rawGet sends target as the request line's path, unchanged.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestOnlyThePagesFilesAreServed(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("the workspace's secret"), 0o644))
	srv := startServer(t, dir, false)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, target := range []string{
		"/../go.mod", "/%2e%2e/go.mod", "/%2E%2E/%2e%2e/go.mod", "/..%2fgo.mod", "//etc/passwd", "/page/../index.html",
		"/page/index.html", "/./index.html", "/index.html/", "/secret.txt", "/../secret.txt", "/.ralph/serve.token",
		"/%2e%2e%2f.ralph/events-20261125-000000.jsonl", "/..\\secret.txt", "/api/../secret.txt", "/etc/passwd",
	} {
		code, body := rawGet(t, addr, target)
		assert.Equal(t, http.StatusNotFound, code, target)
		assert.NotContains(t, body, "module github.com", target)
		assert.NotContains(t, body, "secret", target)
		assert.NotContains(t, body, "root:", target)
	}
	code, body := rawGet(t, addr, "/")
	assert.Equal(t, http.StatusOK, code)
	index, err := fs.ReadFile(assets, "index.html")
	require.NoError(t, err)
	assert.Equal(t, string(index), body)
}

func TestTheOpenAPIDocumentDescribesEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc, &doc))
	assert.True(t, strings.HasPrefix(doc.OpenAPI, "3."))
	documented := map[string]string{}
	for path, ops := range doc.Paths {
		var methods []string
		for m := range ops {
			methods = append(methods, strings.ToUpper(m))
		}
		sort.Strings(methods)
		documented[path] = strings.Join(methods, ",")
	}
	assert.Equal(t, NewHandler(t.TempDir(), testToken, false, nil).routeMethods(), documented)

	srv := startServer(t, t.TempDir(), false)
	resp, body := request(t, http.MethodGet, srv.URL+"/api/openapi.json", "", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, string(openAPIDoc), body)
}

// sseEvent is one event of a Server-Sent Events stream.
type sseEvent struct{ id, name, data string }

// sseStream reads a stream's events, and counts its comments.
type sseStream struct {
	resp  *http.Response
	lines *bufio.Scanner
}

func openStream(t *testing.T, ctx context.Context, url, lastID string) *sseStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	t.Cleanup(func() { _ = resp.Body.Close() })
	return &sseStream{resp: resp, lines: bufio.NewScanner(resp.Body)}
}

func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case line == "":
			if ev.name != "" {
				return ev
			}
		case strings.HasPrefix(line, ":"): // a comment: a keepalive
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
	require.FailNow(t, "the stream ended", "%v", s.lines.Err())
	return ev
}

// awaitComment reads the stream up to its next comment, which must come
// before any event.
func (s *sseStream) awaitComment(t *testing.T) {
	t.Helper()
	for s.lines.Scan() {
		line := s.lines.Text()
		if strings.HasPrefix(line, ":") {
			return
		}
		require.Empty(t, line, "an event came before a keepalive")
	}
	require.FailNow(t, "the stream ended", "%v", s.lines.Err())
}

func topicOf(t *testing.T, ev sseEvent) string {
	t.Helper()
	var e struct{ Topic string }
	require.NoError(t, json.Unmarshal([]byte(ev.data), &e), ev.data)
	return e.Topic
}

func TestTheEventStreamResumesAfterTheLastEventID(t *testing.T) {
	dir, log := newWorkspace(t, 3)
	srv := startServer(t, dir, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first, cut := context.WithCancel(ctx)
	s := openStream(t, first, srv.URL+"/api/events/stream", "")
	var got []string
	for range 3 {
		ev := s.next(t)
		got = append(got, topicOf(t, ev))
		assert.Equal(t, "event", ev.name)
	}
	appendEvent(t, log, "build.3")
	ev := s.next(t)
	got, lastID := append(got, topicOf(t, ev)), ev.id
	cut() // the client goes away mid-run

	appendEvent(t, log, "build.4")
	appendEvent(t, log, "review.done")
	s = openStream(t, ctx, srv.URL+"/api/events/stream", lastID)
	for range 2 {
		got = append(got, topicOf(t, s.next(t)))
	}
	appendEvent(t, log, "build.5")
	ev = s.next(t)
	got = append(got, topicOf(t, ev))
	assert.Equal(t, []string{"build.0", "build.1", "build.2", "build.3", "build.4", "review.done", "build.5"}, got)
	info, err := os.Stat(log)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(info.Size()), ev.id, "an event's id is where the next line starts")

	// Filtered, and resumed with ?from=: only what matches, after it.
	s = openStream(t, ctx, srv.URL+"/api/events/stream?topic=build.*&from="+lastID, "")
	assert.Equal(t, "build.4", topicOf(t, s.next(t)))
	assert.Equal(t, "build.5", topicOf(t, s.next(t)))
	// With nothing to send, it says it is alive.
	appendEvent(t, log, "review.again")
	s.awaitComment(t)
	appendEvent(t, log, "build.6")
	assert.Equal(t, "build.6", topicOf(t, s.next(t)), "a filtered-out line sends nothing")
}

func TestTheEventStreamStartsWithTheLastN(t *testing.T) {
	dir, log := newWorkspace(t, 5)
	srv := startServer(t, dir, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := openStream(t, ctx, srv.URL+"/api/events/stream?last=2", "")
	assert.Equal(t, "build.3", topicOf(t, s.next(t)))
	assert.Equal(t, "build.4", topicOf(t, s.next(t)))
	appendEvent(t, log, "build.5")
	appendEvent(t, log, "build.6")
	assert.Equal(t, "build.5", topicOf(t, s.next(t)), "every new event, not only the last 2")
	assert.Equal(t, "build.6", topicOf(t, s.next(t)))
}

// With text=true each message carries, below the log's line, the event's
// text in the words of `ralph events` (view.EventText): the page shows
// ralph's own lines as sentences, as the command line does.
func TestTheEventStreamCarriesEachEventsText(t *testing.T) {
	dir, log := newWorkspace(t, 1)
	finished := events.Event{Topic: runfiles.TopicIterationFinished, Source: events.SourceRalph, Iteration: 1, Hat: "builder",
		Payload: events.ObjectPayload(map[string]any{"iteration": 1, "hat": "builder", "outcome": "success", "duration_ms": 1500,
			"cost_usd": 0, "cost_source": "unknown"})}
	require.NoError(t, events.AppendTo(log, finished))
	srv := startServer(t, dir, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := openStream(t, ctx, srv.URL+"/api/events/stream?text=true&last=2", "")
	var texts []string
	for _, want := range []string{"build.0", runfiles.TopicIterationFinished} {
		line, text, ok := strings.Cut(s.next(t).data, "\n")
		require.True(t, ok, "a second data line")
		assert.Equal(t, want, topicOf(t, sseEvent{data: line}))
		var got string
		require.NoError(t, json.Unmarshal([]byte(text), &got), text)
		texts = append(texts, got)
	}
	ev, err := events.ParseLine([]byte(strings.SplitN(mustRead(t, log), "\n", 3)[1]))
	require.NoError(t, err)
	assert.Equal(t, []string{"build.0", view.EventText(ev, false)}, texts)
	assert.Equal(t, "builder success 2s 0 tok cost unknown", texts[1])

	resp, body := request(t, http.MethodGet, srv.URL+"/api/events/stream?text=maybe", "", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, body, "text=true")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func TestTheEventStreamRefusesAnIDThatIsNotALinesStart(t *testing.T) {
	dir, _ := newWorkspace(t, 2)
	srv := startServer(t, dir, false)
	for _, id := range []string{"5", "-1", "x", "999999"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/events/stream", nil)
		require.NoError(t, err)
		req.Header.Set("Last-Event-ID", id)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, id)
		assert.Contains(t, string(body), "Last-Event-ID", id)
	}
}

func TestTheDashboardStreamSendsEachChange(t *testing.T) {
	dir, log := newWorkspace(t, 0)
	srv := startServer(t, dir, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := openStream(t, ctx, srv.URL+"/api/dashboard/stream", "")
	ev := s.next(t)
	assert.Equal(t, "dashboard", ev.name)
	assert.Empty(t, ev.id)
	appendEvent(t, log, "build.0")
	st := runfiles.NewRunState()
	st.RunID, st.EventsFile, st.Objective = "20261125-000000", filepath.Join(runfiles.DirName, filepath.Base(log)), "test the stream"
	require.NoError(t, runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Save(st, runfiles.PhaseSelecting, time.Now()))
	for !strings.Contains(ev.data, "20261125-000000") {
		ev = s.next(t)
	}
	var d struct{ Kind string }
	require.NoError(t, json.Unmarshal([]byte(ev.data), &d))
	assert.Equal(t, "loop", d.Kind)
}

// A run that has ended does not move: read every tick, its dashboard is
// the same, and the stream sends it once and then only keepalives.
func TestTheDashboardStreamSendsARunThatEndedOnce(t *testing.T) {
	dir, log := newWorkspace(t, 1)
	ended := time.Date(2026, 11, 25, 0, 1, 0, 0, time.UTC)
	st := runfiles.NewRunState()
	st.RunID, st.EventsFile = "20261125-000000", filepath.Join(runfiles.DirName, filepath.Base(log))
	st.StartedAt, st.LastEventAt, st.PriorRuntime = ended.Add(-time.Minute), ended, time.Minute
	st.Terminated = &runfiles.Termination{Reason: runfiles.ReasonCompleted, At: ended}
	require.NoError(t, runfiles.Checkpoint{Path: runfiles.In(dir).State()}.Save(st, runfiles.PhaseDone, ended))
	h := NewHandler(dir, testToken, false, nil)
	h.keepalive, h.tick = 50*time.Millisecond, 5*time.Millisecond
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	s := openStream(t, ctx, srv.URL+"/api/dashboard/stream", "")
	var d struct {
		Loop struct{ Started, Stopped time.Time }
	}
	require.NoError(t, json.Unmarshal([]byte(s.next(t).data), &d))
	assert.Equal(t, ended, d.Loop.Stopped.UTC())
	assert.Equal(t, ended.Add(-time.Minute), d.Loop.Started.UTC())
	for range 3 {
		s.awaitComment(t) // ten reads and more each
	}
}

func TestTheTokenIsMadeOnceAndKept(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, runfiles.DirName), 0o700))
	token, kept, err := LoadToken(dir)
	require.NoError(t, err)
	assert.True(t, kept)
	assert.Len(t, token, 64)
	info, err := os.Stat(runfiles.In(dir).ServeToken())
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	assert.FileExists(t, filepath.Join(dir, runfiles.DirName, runfiles.IgnoreFile), "git ignores the token")
	again, _, err := LoadToken(dir)
	require.NoError(t, err)
	assert.Equal(t, token, again)

	require.NoError(t, os.WriteFile(runfiles.In(dir).ServeToken(), []byte("\n"), 0o600))
	_, _, err = LoadToken(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "empty")
}

// Where no .ralph/ is, the token is kept outside the workspace, in the
// user's cache: a reader makes nothing in the workspace, and a page keeps
// its token across restarts, before and after a run makes .ralph/.
func TestTheTokenOfAWorkspaceWithoutRalphDirIsKeptOutsideIt(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	token, kept, err := LoadToken(dir)
	require.NoError(t, err)
	assert.False(t, kept)
	assert.Len(t, token, 64)
	assert.NoDirExists(t, filepath.Join(dir, runfiles.DirName))
	outside, err := outsideToken(dir)
	require.NoError(t, err)
	info, err := os.Stat(outside)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, os.Mkdir(filepath.Join(dir, runfiles.DirName), 0o700))
	again, _, err := LoadToken(dir)
	require.NoError(t, err)
	assert.Equal(t, token, again, "the same token once a run made .ralph/")
	assert.NoFileExists(t, runfiles.In(dir).ServeToken())
}

func TestRunSaysWhyItCannotListen(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the tokens of workspaces without .ralph/
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	var out strings.Builder
	err = Run(context.Background(), &out, Options{Dir: t.TempDir(), Addr: taken.Addr().String()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listen on "+taken.Addr().String())
	assert.Contains(t, view.HintOf(err), "127.0.0.1:0 for any free one")
	assert.Empty(t, out.String(), "it printed no address it does not listen on")

	err = Run(context.Background(), &out, Options{Dir: t.TempDir(), Addr: "nowhere"})
	require.Error(t, err)
	assert.Contains(t, view.HintOf(err), "--addr HOST:PORT")
}

func TestRunServesUntilItsContextEnds(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	ended := make(chan error, 1)
	go func() { ended <- Run(ctx, w, Options{Dir: dir, Addr: "127.0.0.1:0"}) }()
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	token, _, err := LoadToken(dir)
	require.NoError(t, err)
	url, ok := strings.CutSuffix(strings.TrimPrefix(strings.TrimSpace(line), "ralph serve: listening on "), "/#token="+token)
	require.True(t, ok, line)
	go func() { _, _ = io.Copy(io.Discard, r) }()

	s := openStream(t, context.Background(), url+"/api/events/stream", "")
	assert.Equal(t, "build.0", topicOf(t, s.next(t)))
	cancel()
	require.NoError(t, <-ended)
	for s.lines.Scan() {
		require.True(t, s.lines.Text() == "" || strings.HasPrefix(s.lines.Text(), ":"))
	}
	assert.NoError(t, s.lines.Err(), "the stream ended with the server")
}

func TestBadRequestsSayWhatIsWrong(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	srv := startServer(t, dir, false)
	cases := []struct {
		method, path, body string
		status             int
		says               string
	}{
		{http.MethodPost, "/api/answer", `{"text": ""}`, http.StatusBadRequest, "the answer has no text"},
		{http.MethodPost, "/api/answer", `{"text": "yes", "by": "me"}`, http.StatusBadRequest, `unknown field \"by\"`},
		{http.MethodPost, "/api/stop", `now`, http.StatusBadRequest, "the request's body"},
		{http.MethodPost, "/api/stop", `{"now": "yes"}`, http.StatusBadRequest, "the request's body"},
		{http.MethodPost, "/api/pause", strings.Repeat(" ", maxBody+1), http.StatusBadRequest, "too long"},
		{http.MethodPost, "/api/pause", "", http.StatusConflict, "no autopilot is running"},
		{http.MethodGet, "/api/events?last=0", "", http.StatusBadRequest, `last=\"0\" is not a whole number from 1`},
		{http.MethodGet, "/api/events?iteration=x", "", http.StatusBadRequest, "iteration"},
		{http.MethodGet, "/api/events?autopilot=maybe", "", http.StatusBadRequest, "autopilot"},
		{http.MethodGet, "/api/events?topics=build.*", "", http.StatusBadRequest, `unknown query parameter \"topics\"`},
		{http.MethodGet, "/api/events?since=yesterday-ish", "", http.StatusBadRequest, "since"},
		{http.MethodGet, "/api/events?run=nope", "", http.StatusNotFound, `no run \"nope\"`},
		{http.MethodGet, "/api/events?autopilot=true", "", http.StatusNotFound, "no autopilot has run here"},
		{http.MethodGet, "/api/events/stream?topic=a%20b", "", http.StatusBadRequest, "topic"},
		{http.MethodGet, "/api/iterations?task=nine", "", http.StatusNotFound, "no event log for task nine"},
	}
	for _, c := range cases {
		resp, body := request(t, c.method, srv.URL+c.path, testToken, c.body)
		assert.Equal(t, c.status, resp.StatusCode, "%s %s: %s", c.method, c.path, body)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Contains(t, body, c.says, "%s %s", c.method, c.path)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		assert.NotEmpty(t, e.Hint, "%s %s says how to fix it: %s", c.method, c.path, body)
	}
}

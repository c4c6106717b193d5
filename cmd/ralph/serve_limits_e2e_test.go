package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of what `ralph serve` gives a client that holds it open: its
// streams, its idle connections, its cookie, and the addresses it prints.

// open opens a stream at path, with the token as a bearer token when
// withToken, and returns the response and, when its status is 200, the
// stream (closed at the test's end); any other answer is read and closed.
func (s *server) open(path string, withToken bool) (*http.Response, *eventStream) {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+path, nil)
	require.NoError(s.t, err)
	if withToken {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		cancel()
		return resp, nil
	}
	es := &eventStream{t: s.t, body: resp.Body, lines: bufio.NewScanner(resp.Body), cancel: cancel}
	es.lines.Buffer(nil, 4<<20)
	s.t.Cleanup(es.close)
	return resp, es
}

// inotifyInstances counts the inotify instances process pid holds.
func inotifyInstances(t *testing.T, pid int) int {
	t.Helper()
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(fds)
	if os.IsNotExist(err) {
		t.Skip("no /proc: inotify is Linux's")
	}
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// Each stream once took an inotify instance of its own, of the 128 the
// kernel commonly gives a user for all their programs: a page's worth of
// clients, with or without the token, left `ralph loop` unable to start.
func TestServeManyStreamsLeaveRalphLoopAbleToStart(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", twoHatConfig+agentCLI())
	w.script(twoHatScript())
	r := w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)

	// On loopback, with room for them all: 200 streams, half of them
	// without the token, which loopback GETs do not need.
	roomy := startServe(t, w.dir, "--max-streams", "1000")
	var dashboard *eventStream
	for i := range 200 {
		path := "/api/events/stream"
		if i%2 == 0 {
			path = "/api/dashboard/stream"
		}
		resp, stream := roomy.open(path, i%4 < 2)
		require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d", i)
		// Once its first event came, the server follows what it shows.
		if stream.next().name == "dashboard" && dashboard == nil {
			dashboard = stream
		}
	}
	assert.LessOrEqual(t, inotifyInstances(t, roomy.cmd.Process.Pid), 1, "200 streams share one kernel watcher")

	// Off loopback, with the default limits: 200 clients without the
	// token are refused and let go; with it, a client gets its quarter of
	// the 64 streams and is then told when to come back.
	guarded := startServeOn(t, w.dir, "0.0.0.0:0")
	for i := range 200 {
		resp, _ := guarded.open("/api/dashboard/stream", false)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "stream %d", i)
		assert.True(t, resp.Close, "the connection of a client without the token is closed")
	}
	open := 0
	for i := range 200 {
		resp, _ := guarded.open("/api/events/stream", true)
		if resp.StatusCode == http.StatusOK {
			open++
			continue
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "stream %d", i)
		assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	}
	assert.Equal(t, 16, open, "one client's quarter of the default 64 streams")
	assert.LessOrEqual(t, inotifyInstances(t, guarded.cmd.Process.Pid), 1)

	// A loop starts beside them, and the streams see it.
	r = w.ralph("loop")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "inotify")
	// The run's id, not its log's name: two runs started in the same
	// second have logs named apart by a suffix the id does not carry.
	r = w.ralph("status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.NotEmpty(t, st.RunID)
	dashboard.until(st.RunID)
}

// readToEnd reads conn until the server closes it; the deadline, far
// beyond any timeout the test sets, is only there to fail a server that
// never does.
func readToEnd(t *testing.T, conn net.Conn) error {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Minute)))
	_, err := io.Copy(io.Discard, conn)
	return err
}

// request sends one request on conn and reads its answer.
func requestOn(t *testing.T, conn net.Conn, path string) *http.Response {
	t.Helper()
	_, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+conn.RemoteAddr().String()+"\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp
}

func TestServeClosesIdleConnections(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	s := startServe(t, w.dir, "--idle-timeout", "1s")
	addr := strings.TrimPrefix(s.url, "http://")

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	assert.NoError(t, readToEnd(t, silent), "a connection that never sends a request is closed")

	kept, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer kept.Close()
	resp := requestOn(t, kept, "/api/status")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, resp.Close)
	assert.NoError(t, readToEnd(t, kept), "a kept-alive connection is closed once idle")

	// Off loopback, a client without the token is let go at once, long
	// before the idle timeout.
	guarded := startServeOn(t, w.dir, "0.0.0.0:0", "--idle-timeout", "1h")
	refused, err := net.Dial("tcp", strings.TrimPrefix(guarded.url, "http://"))
	require.NoError(t, err)
	defer refused.Close()
	resp = requestOn(t, refused, "/api/events/stream")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.NoError(t, readToEnd(t, refused), "the refused client's connection is closed")

	r := runRalph(t, "serve", "-C", w.dir, "--idle-timeout", "0s")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "--idle-timeout")
}

package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clientFrom is an HTTP client whose connections come from ip, one of
// loopback's many addresses (127.0.0.0/8): another client to the server.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// tryStream opens a stream from client: its response when it was
// refused (the body read), or nil and the open stream.
func tryStream(t *testing.T, ctx context.Context, client *http.Client, url string) (*http.Response, *sseStream) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, nil
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return nil, &sseStream{resp: resp, lines: bufio.NewScanner(resp.Body)}
}

func TestStreamsAreLimitedPerClientAndInAll(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	h := NewHandler(dir, testToken, false, nil)
	h.streams = newStreamLimit(8) // two per client
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	paths := []string{"/api/events/stream", "/api/dashboard/stream"}

	first, cut := context.WithCancel(ctx)
	a := clientFrom("127.0.0.1")
	for i, path := range paths {
		c := ctx
		if i == 0 {
			c = first
		}
		refused, s := tryStream(t, c, a, srv.URL+path)
		require.Nil(t, refused)
		s.next(t)
	}
	refused, _ := tryStream(t, ctx, a, srv.URL+paths[0])
	require.NotNil(t, refused, "a third stream of one client")
	assert.Equal(t, http.StatusServiceUnavailable, refused.StatusCode)
	assert.Equal(t, "5", refused.Header.Get("Retry-After"))
	assert.True(t, refused.Close, "the refused client's connection is closed")

	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		for _, path := range paths {
			refused, s := tryStream(t, ctx, clientFrom(ip), srv.URL+path)
			require.Nil(t, refused, ip)
			s.next(t)
		}
	}
	refused, _ = tryStream(t, ctx, clientFrom("127.0.0.5"), srv.URL+paths[1])
	require.NotNil(t, refused, "a ninth stream in all")
	assert.Equal(t, http.StatusServiceUnavailable, refused.StatusCode)

	// A stream that ends gives its place back, once the server has seen
	// its client go.
	cut()
	for {
		refused, s := tryStream(t, ctx, a, srv.URL+paths[0])
		if refused == nil {
			s.next(t)
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, refused.StatusCode)
		require.NoError(t, ctx.Err(), "the ended stream's place never came back")
	}
}

// readToEnd reads conn until the server closes it (nil) or the deadline,
// far beyond any timeout the test sets, passes.
func readToEnd(t *testing.T, conn net.Conn) error {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Minute)))
	_, err := io.Copy(io.Discard, conn)
	return err
}

// serveWith runs h as Run does, with idle as its idle timeout, and
// returns its address.
func serveWith(t *testing.T, h *Handler, idle time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := newServer(context.Background(), h, idle)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	dir, log := newWorkspace(t, 1)
	h := NewHandler(dir, testToken, false, nil)
	h.keepalive = 20 * time.Millisecond
	addr := serveWith(t, h, 300*time.Millisecond)

	silent, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer silent.Close()
	assert.NoError(t, readToEnd(t, silent), "a connection that never sends a request is closed")

	kept, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer kept.Close()
	_, err = io.WriteString(kept, "GET /api/status HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(kept), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, resp.Close, "kept alive for the next request")
	assert.NoError(t, readToEnd(t, kept), "a kept-alive connection that goes idle is closed")

	// A stream is not idle: it outlives the timeouts that close the rest.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := openStream(t, ctx, "http://"+addr+"/api/events/stream", "")
	assert.Equal(t, "build.0", topicOf(t, s.next(t)))
	for start := time.Now(); time.Since(start) < time.Second; {
		s.awaitComment(t)
	}
	appendEvent(t, log, "build.1")
	assert.Equal(t, "build.1", topicOf(t, s.next(t)))
}

// Off loopback, a client without the token is answered and let go at
// once, whatever the idle timeout.
func TestARequestWithoutTheTokenClosesItsConnection(t *testing.T) {
	dir, _ := newWorkspace(t, 1)
	h := NewHandler(dir, testToken, true, nil)
	addr := serveWith(t, h, time.Hour)
	for _, path := range []string{"/api/status", "/api/events/stream", "/api/dashboard/stream"} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		require.NoError(t, err)
		rd := bufio.NewReader(conn)
		resp, err := http.ReadResponse(rd, nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		assert.NotEqual(t, "text/event-stream", resp.Header.Get("Content-Type"), path)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(body), "needs the token"), path)
		assert.NoError(t, readToEnd(t, conn), path)
		_ = conn.Close()
	}
	h.streams.mu.Lock()
	defer h.streams.mu.Unlock()
	assert.Zero(t, h.streams.open, "no stream was counted")
}

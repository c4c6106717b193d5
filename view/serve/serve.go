package serve

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
)

// DefaultAddr is where `ralph serve` listens unless told otherwise: on
// loopback, so only this machine's users reach it.
const DefaultAddr = "127.0.0.1:7777"

// Options are `ralph serve`'s.
type Options struct {
	Dir  string // the workspace
	Addr string // host:port to listen on (port 0 picks a free one); "" is DefaultAddr
	// IdleTimeout is how long a connection may sit idle, between requests
	// or before its first, before it is closed; 0 is DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxStreams bounds the event and dashboard streams open at once, a
	// quarter of them from one client address; 0 is DefaultMaxStreams.
	MaxStreams int
	// Redactor hides secret values in what is served of the logs.
	Redactor *redact.Redactor
}

// DefaultIdleTimeout is how long an idle connection stays open unless
// told otherwise.
const DefaultIdleTimeout = time.Minute

// shutdownGrace bounds how long a shutdown waits for requests under way.
const shutdownGrace = 5 * time.Second

// Run serves the workspace until ctx is done (Ctrl-C, SIGTERM), then
// ends every stream and returns. It prints once, to out, where it listens
// with the token in the address, for a browser to open.
func Run(ctx context.Context, out io.Writer, o Options) error {
	token, kept, err := LoadToken(o.Dir)
	if err != nil {
		return err
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return listenError(o.Addr, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	h := NewHandler(o.Dir, token, !addr.IP.IsLoopback(), o.Redactor)
	h.streams = newStreamLimit(o.MaxStreams)
	srv := newServer(ctx, h, o.IdleTimeout)
	if !kept {
		fmt.Fprintf(out, "ralph serve: %s has no .ralph/, and a reader makes none: the token is kept in your cache directory\n", o.Dir)
	}
	printAddresses(out, addr, token)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// The requests' contexts derive from ctx, so the streams have ended.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer is the HTTP server of h. No connection is held by a client
// that says nothing: one idle for idle (between requests, or before its
// first request's headers, though never longer than 10s for these) is
// closed, and a request's body must come within idle too, at most 30s.
// Streams, whose request has no body, last as long as their client reads
// them: the server clears the read deadline once a request is read.
func newServer(ctx context.Context, h *Handler, idle time.Duration) *http.Server {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return &http.Server{Handler: h, IdleTimeout: idle,
		ReadHeaderTimeout: min(10*time.Second, idle), ReadTimeout: min(30*time.Second, idle),
		BaseContext: func(net.Listener) context.Context { return ctx }}
}

// listenError says why ralph serve cannot listen on addr, and what to do.
func listenError(addr string, err error) error {
	fix := "pass --addr HOST:PORT, e.g. --addr 127.0.0.1:7777 (port 0 picks a free one)"
	if errors.Is(err, syscall.EADDRINUSE) {
		fix = "another program (maybe another `ralph serve`) listens there; pick another port with --addr 127.0.0.1:PORT, or 127.0.0.1:0 for any free one"
	}
	return &hint.Error{Err: fmt.Errorf("listen on %s: %w", addr, err), Fix: fix}
}

// openAPIDoc describes the API, for clients and their generators.
//
//go:embed openapi.json
var openAPIDoc []byte

func (h *Handler) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openAPIDoc)
	return err
}

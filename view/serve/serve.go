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

	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view/api"
)

// DefaultAddr is where `ralph serve` listens unless told otherwise: on
// loopback, so only this machine's users reach it.
const DefaultAddr = "127.0.0.1:7777"

// Options are `ralph serve`'s.
type Options struct {
	Dir  string // the workspace
	Addr string // host:port to listen on (port 0 picks a free one); "" is DefaultAddr
	// Redactor hides secret values in what is served of the logs.
	Redactor *redact.Redactor
}

// shutdownGrace bounds how long a shutdown waits for requests under way.
const shutdownGrace = 5 * time.Second

// Run serves the workspace until ctx is done (Ctrl-C, SIGTERM), then
// ends every stream and returns. It prints once, to out, where it listens
// with the token in the address, for a browser to open.
func Run(ctx context.Context, out io.Writer, o Options) error {
	token, err := LoadToken(o.Dir)
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
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	fmt.Fprintf(out, "ralph serve: listening on http://%s/#token=%s\n", addr, token)
	if h.everyRequest {
		fmt.Fprintf(out, "ralph serve: %s is reachable from other hosts: every request needs the token; open the page at http://%s/?token=%s#token=%s\n",
			addr.IP, addr, token, token)
	}
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

// listenError says why ralph serve cannot listen on addr, and what to do.
func listenError(addr string, err error) error {
	fix := "pass --addr HOST:PORT, e.g. --addr 127.0.0.1:7777 (port 0 picks a free one)"
	if errors.Is(err, syscall.EADDRINUSE) {
		fix = "another program (maybe another `ralph serve`) listens there; pick another port with --addr 127.0.0.1:PORT, or 127.0.0.1:0 for any free one"
	}
	return &api.Error{Err: fmt.Errorf("listen on %s: %w", addr, err), Fix: fix}
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

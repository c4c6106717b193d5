package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options says how to reach the NATS servers.
type Options struct {
	// URLs are the servers' URLs; each entry may itself be a comma-separated
	// list, as a user writes it after --cluster. nats:// connects in the
	// clear, tls:// over TLS, verified against the system's roots.
	URLs []string
	// CredsFile is a NATS credentials file (.creds: a user JWT and its
	// nkey seed), or empty to connect without.
	CredsFile string
	// Name names the connection in the servers' monitoring, for instance
	// "ralph worker on host".
	Name string
	// Log, when set, is told when the connection is lost and when it is
	// back, from the connection's own goroutine, until Close.
	Log func(msg string)
}

// Conn is a connection to the NATS servers that reconnects forever: after
// a server restarts or the network comes back, it goes on with the same or
// another server of the cluster. Publishing while it is cut off waits, up
// to each call's context.
type Conn struct {
	nc *nats.Conn
	js jetstream.JetStream
}

// Timings of the connection.
const (
	reconnectWait = 500 * time.Millisecond
	// A server that stops answering (the network is cut, no connection is
	// closed) is given up after about pingInterval × maxPingsOut.
	pingInterval = 5 * time.Second
	maxPingsOut  = 3
	dialTimeout  = 10 * time.Second
)

// Connect connects to the first server of opts.URLs that answers. It fails
// if none does: a mistyped URL should say so at once; once connected the
// connection is never given up.
func Connect(ctx context.Context, opts Options) (*Conn, error) {
	urls := splitURLs(opts.URLs)
	if len(urls) == 0 {
		return nil, errors.New("no NATS server URL")
	}
	timeout := dialTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logf := func(string, ...any) {}
	if opts.Log != nil {
		logf = func(format string, v ...any) { opts.Log(fmt.Sprintf(format, v...)) }
	}
	nopts := []nats.Option{
		nats.Name(opts.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.Timeout(timeout),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return // by Close
			}
			if err != nil {
				logf("lost the NATS server: %v; reconnecting", err)
			} else {
				logf("lost the NATS server; reconnecting")
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logf("reconnected to NATS server %s", nc.ConnectedUrlRedacted())
		}),
	}
	if opts.CredsFile != "" {
		nopts = append(nopts, nats.UserCredentials(opts.CredsFile))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nopts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", strings.Join(urls, ","), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("JetStream: %w", err)
	}
	return &Conn{nc: nc, js: js}, nil
}

func splitURLs(in []string) []string {
	var out []string
	for _, s := range in {
		for u := range strings.SplitSeq(s, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}

// JetStream is the connection's JetStream API, for the functions of this
// package.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// NATS is the underlying connection.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// Close sends what is buffered, acknowledgements included, and closes the
// connection.
func (c *Conn) Close() { c.nc.Close() }

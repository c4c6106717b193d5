package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
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
	// NKeyFile is a file holding an nkey seed to authenticate with, for
	// servers whose authorization lists its public key; or empty.
	NKeyFile string
	// Name names the connection in the servers' monitoring, for instance
	// "ralph worker on host".
	Name string
	// Logger, when set, is told when the connection is lost and when it
	// is back, from the connection's own goroutine, until Close.
	Logger *slog.Logger
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
	log := orDiscard(opts.Logger)
	logf := func(format string, v ...any) { logAt(log, slog.LevelWarn, nil, format, v...) }
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
	if opts.NKeyFile != "" {
		s, err := ReadSigner(opts.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("the NATS nkey: %w", err)
		}
		nopts = append(nopts, nats.Nkey(s.PublicKey(), s.kp.Sign))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nopts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", redactedURLs(urls), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("JetStream: %w", err)
	}
	return &Conn{nc: nc, js: js}, nil
}

// CheckCredentials refuses a server that is not on this machine when
// ralph would connect to it without credentials: one that lets anyone
// connect lets anyone take the tasks, read what they carry and flood the
// queues. Credentials are a .creds file, an nkey, or a user (and
// password, or a token) in the server's URL. Loopback addresses
// (127.0.0.0/8, ::1, localhost) are this machine; a name is not looked
// up, since it may mean another machine tomorrow.
func CheckCredentials(opts Options) error {
	if opts.CredsFile != "" || opts.NKeyFile != "" {
		return nil
	}
	for _, raw := range splitURLs(opts.URLs) {
		u, err := url.Parse(withScheme(raw))
		if err != nil {
			return fmt.Errorf("the NATS server URL %q: %w", raw, err)
		}
		if u.User != nil && u.User.Username() != "" || loopback(u.Hostname()) {
			continue
		}
		return &SetupError{
			Err: fmt.Errorf("the NATS server %s is not on this machine, and ralph has no credentials for it: "+
				"a server that lets anyone in lets anyone take the tasks and send results", u.Redacted()),
			Fix: "give the servers an authorization block (see the README's cluster section) and ralph its credentials: " +
				"--creds FILE (a NATS .creds file) or --nkey FILE (an nkey seed the servers list) for ralph worker, " +
				"autopilot.cluster.creds or autopilot.cluster.nkey for the coordinator, " +
				"or a user and password in the URL (nats://ralph:PASSWORD@host:4222)",
		}
	}
	return nil
}

// withScheme gives a URL written as host:port the nats:// scheme NATS
// clients assume.
func withScheme(u string) string {
	if strings.Contains(u, "://") {
		return u
	}
	return "nats://" + u
}

func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

// redactedURLs are urls as an error may quote them: a password in one
// (nats://ralph:PASSWORD@host) is the cluster's credential, and the
// terminal and the logs get it as xxxxx.
func redactedURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, raw := range urls {
		out[i] = raw
		if u, err := url.Parse(withScheme(raw)); err == nil {
			out[i] = u.Redacted()
		}
	}
	return strings.Join(out, ",")
}

// JetStream is the connection's JetStream API, for the functions of this
// package.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// NATS is the underlying connection.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// Close sends what is buffered, acknowledgements included, and closes the
// connection.
func (c *Conn) Close() { c.nc.Close() }

// Package natstest starts real NATS servers with JetStream in the test's
// process: one standalone server or a JetStream cluster of several, on
// 127.0.0.1, with file storage in the test's temporary directories. The
// servers are quiet unless the test fails, when their logs are printed, and
// they are shut down when the test ends.
package natstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"
)

// ReadyTimeout bounds how long StartCluster and Restart wait for the
// servers to be ready. Forming a cluster takes a few seconds on an idle
// machine; the bound is generous for a busy one.
const ReadyTimeout = 60 * time.Second

// Option changes how StartCluster configures its servers.
type Option func(*settings)

type settings struct {
	user, password string
	nkey           nkeys.KeyPair
}

// WithUser makes the servers require this user and password of clients.
// The cluster's URLs do not carry them; clients pass them as they would to
// a real server (for instance nats.UserInfo or user:password@ in a URL).
func WithUser(user, password string) Option {
	return func(s *settings) { s.user, s.password = user, password }
}

// WithNKey makes the servers require of clients the nkey of kp (a user
// key): clients sign the servers' challenge with its seed, as
// nats.Nkey does.
func WithNKey(kp nkeys.KeyPair) Option {
	return func(s *settings) { s.nkey = kp }
}

// clientAuth are the options a client of the servers needs.
func (s settings) clientAuth() []nats.Option {
	var opts []nats.Option
	if s.user != "" {
		opts = append(opts, nats.UserInfo(s.user, s.password))
	}
	if s.nkey != nil {
		pub, _ := s.nkey.PublicKey()
		opts = append(opts, nats.Nkey(pub, s.nkey.Sign))
	}
	return opts
}

// Cluster is a running set of servers. Its methods fail the test on error;
// they may be called from the test's goroutine only.
type Cluster struct {
	t        testing.TB
	settings settings
	nodes    []*node
}

type node struct {
	name       string
	clientPort int
	routePort  int
	storeDir   string
	logs       *logBuffer
	srv        *server.Server // nil while the node is shut down
}

// StartCluster starts n servers with JetStream, forming one JetStream
// cluster when n > 1 (a standalone JetStream server when n is 1), and
// waits until a stream replicated on all n of them can be created. They
// are shut down when the test ends.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	require.GreaterOrEqual(t, n, 1, "a cluster of %d servers", n)
	c := &Cluster{t: t}
	for _, o := range opts {
		o(&c.settings)
	}
	// A single server binds a port the kernel chooses as it binds, which
	// no other process can take first; servers of a cluster need each
	// other's route ports before any starts, so theirs are chosen up front.
	ports := []int{server.RANDOM_PORT, server.RANDOM_PORT}
	if n > 1 {
		ports = freePorts(t, 2*n)
	}
	for i := range n {
		c.nodes = append(c.nodes, &node{
			name:       "ralph-test-" + strconv.Itoa(i),
			clientPort: ports[2*i],
			routePort:  ports[2*i+1],
			storeDir:   t.TempDir(),
			logs:       &logBuffer{},
		})
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.srv != nil {
				nd.srv.Shutdown()
				nd.srv.WaitForShutdown()
				nd.srv = nil
			}
		}
		if t.Failed() {
			for _, nd := range c.nodes {
				t.Logf("log of NATS server %s:\n%s", nd.name, nd.logs.String())
			}
		}
	})
	for i := range c.nodes {
		c.start(i)
	}
	c.waitReady()
	return c
}

// URLs are the servers' client URLs, comma-separated, as a user passes them
// to --cluster.
func (c *Cluster) URLs() string {
	return strings.Join(c.URLList(), ",")
}

// URLList are the servers' client URLs, one per server in order.
func (c *Cluster) URLList() []string {
	var urls []string
	for _, nd := range c.nodes {
		urls = append(urls, "nats://127.0.0.1:"+strconv.Itoa(nd.clientPort))
	}
	return urls
}

// URL is server i's client URL.
func (c *Cluster) URL(i int) string { return c.URLList()[i] }

// Size is the number of servers, running or shut down.
func (c *Cluster) Size() int { return len(c.nodes) }

// Server is server i, nil while it is shut down.
func (c *Cluster) Server(i int) *server.Server { return c.nodes[i].srv }

// Shutdown stops server i and waits until it has stopped. Its storage is
// kept for Restart.
func (c *Cluster) Shutdown(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	require.NotNil(c.t, nd.srv, "server %d is already shut down", i)
	nd.srv.Shutdown()
	nd.srv.WaitForShutdown()
	nd.srv = nil
}

// Restart starts server i again, on the same ports and with the same
// storage, and waits until it accepts clients and its JetStream has caught
// up with the cluster.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	require.Nil(c.t, c.nodes[i].srv, "server %d is running", i)
	c.start(i)
	c.waitReady()
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	nd := c.nodes[i]
	opts := &server.Options{
		ServerName: nd.name,
		Host:       "127.0.0.1",
		Port:       nd.clientPort,
		JetStream:  true,
		StoreDir:   nd.storeDir,
		NoSigs:     true,
		Username:   c.settings.user,
		Password:   c.settings.password,
	}
	if c.settings.nkey != nil {
		pub, err := c.settings.nkey.PublicKey()
		require.NoError(c.t, err)
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}
	if len(c.nodes) > 1 {
		opts.Cluster = server.ClusterOpts{
			Name: "ralph-test",
			Host: "127.0.0.1",
			Port: nd.routePort,
		}
		for j, other := range c.nodes {
			if j != i {
				opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats", Host: "127.0.0.1:" + strconv.Itoa(other.routePort)})
			}
		}
	}
	srv, err := server.NewServer(opts)
	require.NoError(c.t, err, "configuring NATS server %s", nd.name)
	srv.SetLogger(nd.logs, false, false)
	srv.Start()
	if !srv.ReadyForConnections(ReadyTimeout) {
		srv.Shutdown()
		require.FailNow(c.t, "NATS server did not start", "%s: see its log below", nd.name)
	}
	nd.srv = srv
	nd.clientPort = srv.Addr().(*net.TCPAddr).Port // a restart keeps it
}

// waitReady polls until every running server's JetStream is current with
// the cluster and a stream replicated on all running servers can be
// created and removed through each of them.
func (c *Cluster) waitReady() {
	c.t.Helper()
	deadline := time.Now().Add(ReadyTimeout)
	var last error
	for time.Now().Before(deadline) {
		if last = c.probe(); last == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.FailNow(c.t, "NATS cluster not ready", "after %s: %v", ReadyTimeout, last)
}

func (c *Cluster) probe() error {
	running := 0
	for _, nd := range c.nodes {
		if nd.srv == nil {
			continue
		}
		running++
		if nd.srv.JetStreamIsClustered() && !nd.srv.JetStreamIsCurrent() {
			return fmt.Errorf("server %s: JetStream is not current", nd.name)
		}
	}
	for _, nd := range c.nodes {
		if nd.srv == nil {
			continue
		}
		if err := c.probeThrough(nd, running); err != nil {
			return fmt.Errorf("server %s: %w", nd.name, err)
		}
	}
	return nil
}

func (c *Cluster) probeThrough(nd *node, replicas int) error {
	opts := append([]nats.Option{nats.NoReconnect()}, c.settings.clientAuth()...)
	nc, err := nats.Connect("nats://127.0.0.1:"+strconv.Itoa(nd.clientPort), opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	name := "NATSTEST_PROBE_" + strings.ReplaceAll(nd.name, "-", "_")
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     name,
		Subjects: []string{"natstest.probe." + nd.name},
		Storage:  jetstream.MemoryStorage,
		Replicas: replicas,
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("creating a stream with %d replicas: %w", replicas, err)
	}
	if err := js.DeleteStream(ctx, name); err != nil {
		return fmt.Errorf("deleting the probe stream: %w", err)
	}
	return nil
}

// freePorts are n distinct TCP ports on 127.0.0.1 that were free a moment
// ago. The servers need each other's route ports before any starts, so the
// ports are chosen up front rather than by the servers.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var listeners []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range listeners {
		_ = l.Close()
	}
	return ports
}

// logBuffer keeps the last lines a server logs.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

const keepLines = 2000

func (b *logBuffer) add(level, format string, v []any) {
	line := time.Now().Format("15:04:05.000") + " " + level + " " + fmt.Sprintf(format, v...)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
	if len(b.lines) > keepLines {
		b.lines = b.lines[len(b.lines)-keepLines:]
	}
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

func (b *logBuffer) Noticef(format string, v ...any) { b.add("INF", format, v) }
func (b *logBuffer) Warnf(format string, v ...any)   { b.add("WRN", format, v) }
func (b *logBuffer) Fatalf(format string, v ...any)  { b.add("FTL", format, v) }
func (b *logBuffer) Errorf(format string, v ...any)  { b.add("ERR", format, v) }
func (b *logBuffer) Debugf(format string, v ...any)  { b.add("DBG", format, v) }
func (b *logBuffer) Tracef(format string, v ...any)  { b.add("TRC", format, v) }

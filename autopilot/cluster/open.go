package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/git"
)

// RunnerFor is the runner of an autopilot in repo: local when settings
// name no server, else a coordinator (see OpenCoordinator). close releases
// it.
func RunnerFor(ctx context.Context, repo string, settings config.Cluster, local autopilot.Runner, log func(string)) (r autopilot.Runner, close func(), err error) {
	if strings.TrimSpace(settings.NATS) == "" {
		return local, func() {}, nil
	}
	return OpenCoordinator(ctx, repo, settings, log)
}

// OpenCoordinator connects the autopilot in repo to the servers that
// settings name, makes ralph's streams, and starts taking the workers'
// results and events. close stops that and closes the connection.
func OpenCoordinator(ctx context.Context, repo string, settings config.Cluster, log func(string)) (c *Coordinator, close func(), err error) {
	remote := settings.Remote
	url, err := git.Repo{Dir: repo}.RemoteURL(ctx, remote)
	if err != nil || url == "" {
		return nil, nil, fmt.Errorf("the shared remote %q (autopilot.cluster.remote) is not a remote of %s: "+
			"add it with git remote add %s URL, a repository every worker can fetch from and push to", remote, repo, remote)
	}
	host, _ := os.Hostname()
	conn, err := dial(ctx, Options{URLs: []string{settings.NATS}, CredsFile: settings.Creds, Name: "ralph autopilot on " + host, Log: log}, settings.Replicas)
	if err != nil {
		return nil, nil, err
	}
	c, err = NewCoordinator(CoordinatorOptions{JetStream: conn.JetStream(), Repo: repo, RemoteURL: url, Host: host, Log: log})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	// The autopilot's context ends at an interrupt, when it still records
	// how its loops ended; results are taken until it is closed.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.Serve(sctx); err != nil && sctx.Err() == nil {
			log("taking results from the workers stopped: " + err.Error())
		}
	})
	return c, func() {
		cancel()
		wg.Wait()
		conn.Close()
	}, nil
}

// dial connects as opts say (~ in the credentials file is the home
// directory) and makes sure ralph's streams exist with replicas, saying
// how to fix what fails.
func dial(ctx context.Context, opts Options, replicas int) (*Conn, error) {
	if strings.TrimSpace(strings.Join(opts.URLs, "")) == "" {
		return nil, errors.New("no NATS server: give --cluster nats://HOST:4222 or set autopilot.cluster.nats")
	}
	if rest, ok := strings.CutPrefix(opts.CredsFile, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("the credentials file %s: %w", opts.CredsFile, err)
		}
		opts.CredsFile = filepath.Join(home, rest)
	}
	if opts.CredsFile != "" {
		if _, err := os.Stat(opts.CredsFile); err != nil {
			return nil, fmt.Errorf("the NATS credentials file: %w", err)
		}
	}
	conn, err := Connect(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%w; is a NATS server with JetStream (nats-server -js) running there, and are the URLs (--cluster) right?", err)
	}
	if err := EnsureStreams(ctx, conn.JetStream(), replicas); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: the servers need JetStream enabled (nats-server -js), and replicas no more than the servers of the cluster", err)
	}
	return conn, nil
}

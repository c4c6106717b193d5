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
	conn, err := Dial(ctx, settings.NATS, settings.Creds, "ralph autopilot on "+host, log)
	if err != nil {
		return nil, nil, err
	}
	if err := EnsureStreams(ctx, conn.JetStream(), settings.Replicas); err != nil {
		conn.Close()
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

// Dial connects to the servers in urls (comma-separated) with the
// credentials file creds, if any (~ is the home directory), and says how
// to fix a failure.
func Dial(ctx context.Context, urls, creds, name string, log func(string)) (*Conn, error) {
	if strings.TrimSpace(urls) == "" {
		return nil, errors.New("no NATS server: give --cluster nats://HOST:4222 or set autopilot.cluster.nats")
	}
	if rest, ok := strings.CutPrefix(creds, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("the credentials file %s: %w", creds, err)
		}
		creds = filepath.Join(home, rest)
	}
	if creds != "" {
		if _, err := os.Stat(creds); err != nil {
			return nil, fmt.Errorf("the NATS credentials file: %w", err)
		}
	}
	conn, err := Connect(ctx, Options{URLs: []string{urls}, CredsFile: creds, Name: name, Log: log})
	if err != nil {
		return nil, fmt.Errorf("%w (is a JetStream server running there? nats-server -js starts one)", err)
	}
	return conn, nil
}

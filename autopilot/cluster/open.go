package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/git"
)

// RunnerFor is the runner of an autopilot in repo: local when settings
// name no server, else a coordinator (see OpenCoordinator). close releases
// it.
func RunnerFor(ctx context.Context, repo string, settings config.Cluster, local autopilot.Runner, log *slog.Logger) (r autopilot.Runner, close func(), err error) {
	if strings.TrimSpace(settings.NATS) == "" {
		return local, func() {}, nil
	}
	return OpenCoordinator(ctx, repo, settings, log)
}

// OpenCoordinator connects the autopilot in repo to the servers that
// settings name, makes ralph's streams, and starts taking the workers'
// results and events. close stops that and closes the connection.
func OpenCoordinator(ctx context.Context, repo string, settings config.Cluster, log *slog.Logger) (c *Coordinator, close func(), err error) {
	remote := settings.Remote
	url, err := git.Repo{Dir: repo}.RemoteURL(ctx, remote)
	if err != nil || url == "" {
		return nil, nil, fmt.Errorf("the shared remote %q (autopilot.cluster.remote) is not a remote of %s: "+
			"add it with git remote add %s URL, a repository every worker can fetch from and push to", remote, repo, remote)
	}
	host, _ := os.Hostname()
	opts := Options{URLs: []string{settings.NATS}, CredsFile: settings.Creds, NKeyFile: settings.NKey,
		Name: "ralph autopilot on " + host, Logger: log}
	if err := CheckCredentials(opts); err != nil {
		return nil, nil, err
	}
	signer, trust, err := coordinatorKeys(settings)
	if err != nil {
		return nil, nil, err
	}
	conn, err := dial(ctx, opts, settings.Replicas)
	if err != nil {
		return nil, nil, err
	}
	c, err = NewCoordinator(CoordinatorOptions{JetStream: conn.JetStream(), Signer: signer, Trust: trust,
		Repo: repo, RemoteURL: url, Host: host, Logger: log})
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
			orDiscard(log).Warn("taking results from the workers stopped: " + err.Error())
		}
	})
	return c, func() {
		cancel()
		wg.Wait()
		conn.Close()
	}, nil
}

// coordinatorKeys are the coordinator's signing key and the workers' keys
// it trusts, as settings say.
func coordinatorKeys(settings config.Cluster) (*Signer, *Keyring, error) {
	signer, err := readOwnKey(settings.Seed, RoleCoordinator, "set autopilot.cluster.seed to its file")
	if err != nil {
		return nil, nil, err
	}
	trust, err := ReadKeyring(RoleWorker, settings.TrustWorkers)
	if err != nil {
		return nil, nil, &SetupError{Err: fmt.Errorf("autopilot.cluster.trust_workers: %w", err),
			Fix: "list the workers' public keys (U…, which `ralph cluster pubkey` prints on each worker), or files of them"}
	}
	if trust.Len() == 0 {
		return nil, nil, &SetupError{Err: errors.New("the coordinator trusts no worker: it takes results only from workers whose keys it trusts"),
			Fix: "on each worker run `ralph cluster keygen worker`, and list the public keys it prints in autopilot.cluster.trust_workers " +
				"(or pass --trust-worker KEY)"}
	}
	return signer, trust, nil
}

// readOwnKey reads a side's signing key from path, or from role's default
// file; a missing key says how to make one.
func readOwnKey(path, role, setting string) (*Signer, error) {
	if path == "" {
		def, err := DefaultSeedPath(role)
		if err != nil {
			return nil, err
		}
		path = def
	}
	s, err := ReadSigner(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &SetupError{Err: fmt.Errorf("no %s key: %w", role, err),
			Fix: fmt.Sprintf("make one with `ralph cluster keygen %s` (or %s), and give its public key to the other side", role, setting)}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// dial connects as opts say (~ in the credentials and nkey files is the
// home directory) and makes sure ralph's streams exist with replicas,
// saying how to fix what fails. A server off this machine needs
// credentials (CheckCredentials).
func dial(ctx context.Context, opts Options, replicas int) (*Conn, error) {
	if strings.TrimSpace(strings.Join(opts.URLs, "")) == "" {
		return nil, errors.New("no NATS server: give --cluster nats://HOST:4222 or set autopilot.cluster.nats")
	}
	if err := CheckCredentials(opts); err != nil {
		return nil, err
	}
	var err error
	if opts.CredsFile, err = expandHome(opts.CredsFile); err != nil {
		return nil, fmt.Errorf("the credentials file: %w", err)
	}
	if opts.NKeyFile, err = expandHome(opts.NKeyFile); err != nil {
		return nil, fmt.Errorf("the nkey file: %w", err)
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

package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/ralph-loop/ralph/autopilot/cluster"
)

type clusterCmd struct {
	Keygen clusterKeygenCmd `cmd:"" help:"Make the signing key of a coordinator or a worker, and print its public key."`
	Pubkey clusterPubkeyCmd `cmd:"" help:"Print the public key of a coordinator's or a worker's signing key."`
}

func (clusterCmd) Help() string {
	return `The keys of an autopilot's cluster. The coordinator (ralph autopilot --cluster)
signs each task with its key and takes results only from the workers whose
public keys it trusts (autopilot.cluster.trust_workers, --trust-worker); a
worker signs its results with its key and runs only tasks signed by a
coordinator it trusts (--trust-coordinator). A key's seed stays in its file,
readable by its owner alone; only public keys are shared.

Examples:
  ralph cluster keygen coordinator      # where the autopilot runs
  ralph cluster keygen worker           # on each worker
  ralph cluster pubkey worker`
}

type clusterKeygenCmd struct {
	Role string `arg:"" enum:"coordinator,worker" placeholder:"coordinator|worker" help:"Whose key: the coordinator's (ralph autopilot) or a worker's (ralph worker)."`
	Seed string `type:"path" placeholder:"FILE" help:"Where the seed goes, a file that must not exist (default: ~/.config/ralph/<role>.nk)."`
}

func (clusterKeygenCmd) Help() string {
	return `Makes an Ed25519 nkey, writes its seed to a new file readable by you alone
(it never replaces one), and prints its public key, which the other side
trusts: a coordinator's goes to each worker's --trust-coordinator, a worker's
to the coordinator's autopilot.cluster.trust_workers. The seed is never
printed.

Examples:
  ralph cluster keygen coordinator      # where the autopilot runs
  ralph cluster keygen worker           # on each worker
  ralph cluster keygen worker --seed ~/.config/ralph/ci-worker.nk`
}

func (c *clusterKeygenCmd) Run(g *globals) error {
	path, err := seedPath(c.Seed, c.Role)
	if err != nil {
		return err
	}
	pub, err := cluster.WriteNewSeed(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, pub)
	fmt.Fprintf(g.stderr, "ralph: wrote the %s's key to %s, readable by you alone; share only its public key, printed above\n", c.Role, path)
	if c.Role == cluster.RoleCoordinator {
		fmt.Fprintf(g.stderr, "ralph: hint: start each worker with --trust-coordinator %s\n", pub)
	} else {
		fmt.Fprintf(g.stderr, "ralph: hint: list it in the coordinator's autopilot.cluster.trust_workers (or pass ralph autopilot --trust-worker %s)\n", pub)
	}
	return nil
}

type clusterPubkeyCmd struct {
	Role string `arg:"" enum:"coordinator,worker" placeholder:"coordinator|worker" help:"Whose key: the coordinator's or a worker's."`
	Seed string `type:"path" placeholder:"FILE" help:"The seed's file (default: ~/.config/ralph/<role>.nk)."`
	JSON bool   `name:"json" help:"Print one JSON object: role and public_key."`
}

func (clusterPubkeyCmd) Help() string {
	return `Prints the public key of a seed ralph cluster keygen made (or nk -gen user).

Examples:
  ralph cluster pubkey coordinator
  ralph cluster pubkey worker --seed ~/.config/ralph/ci-worker.nk
  ralph cluster pubkey worker --json | jq -r .public_key`
}

func (c *clusterPubkeyCmd) Run(g *globals) error {
	path, err := seedPath(c.Seed, c.Role)
	if err != nil {
		return err
	}
	s, err := cluster.ReadSigner(path)
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(err, "make the key with `ralph cluster keygen "+c.Role+"`")
	}
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(g.stdout, struct {
			Role      string `json:"role"`
			PublicKey string `json:"public_key"`
		}{c.Role, s.PublicKey()})
	}
	fmt.Fprintln(g.stdout, s.PublicKey())
	return nil
}

func seedPath(given, role string) (string, error) {
	if given != "" {
		return given, nil
	}
	return cluster.DefaultSeedPath(role)
}

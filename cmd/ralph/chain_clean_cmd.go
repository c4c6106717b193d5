package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/internal/flagvalue"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

type chainCleanCmd struct {
	MaxAge flagvalue.Age `name:"max-age" placeholder:"D" help:"Remove the chains that ended longer ago than D: 30d, 2w, 36h."`
	Keep   *int          `name:"keep" placeholder:"N" help:"Keep the N latest chains, whatever their age (0: none)."`
	Force  bool          `help:"Remove an unfinished chain too (cut off or stopped short, which ralph chain resume would go on with)."`
	DryRun bool          `name:"dry-run" help:"Say which chains would go, and remove nothing."`
	JSON   bool          `name:"json" help:"Print what was removed and kept as one JSON object."`
}

func (chainCleanCmd) Help() string {
	return `Removes old chain runs: each one's directory under .ralph/chains/<run>/, its
chain.json and every step's loop (event log, runs, handoff), which ralph runs
clean keeps. A chain goes when it is older than --max-age (measured from its
last change: its end, for a chain that ended) and not among the --keep latest;
give either or both. It never removes a chain whose step's loop runs, nor an
unfinished one (cut off, or stopped short at a step: ralph chain resume would
go on with it) unless --force, and refuses while a chain runs in the
workspace. A link planted
under .ralph/ is removed, never followed: nothing outside .ralph/ is touched.

Examples:
  ralph chain clean --max-age 30d
  ralph chain clean --keep 5 --dry-run
  ralph chain clean --max-age 7d --keep 3 --json`
}

func (c *chainCleanCmd) Validate() error {
	switch {
	case c.Keep != nil && *c.Keep < 0:
		return fmt.Errorf("--keep %d: give how many of the latest chains to keep, 0 or more", *c.Keep)
	case c.Keep == nil && c.MaxAge == 0:
		return withHint(errors.New("say which chains to remove: --max-age D, --keep N, or both"),
			"e.g. ralph chain clean --max-age 30d, or ralph chain clean --keep 5 --dry-run to see what would go")
	}
	return nil
}

func (c *chainCleanCmd) Run(ctx context.Context, g *globals) error {
	d := runfiles.In(g.Dir)
	o := chain.CleanOptions{MaxAge: time.Duration(c.MaxAge), Force: c.Force, DryRun: c.DryRun, Now: time.Now()}
	if c.Keep != nil {
		o.Keep = *c.Keep
	}
	ids, err := runfiles.ChainRuns(g.Dir)
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		if err := chainsIdle(d, ids); err != nil {
			return err
		}
		// Held while cleaning: no chain starts or goes on meanwhile.
		lock, err := lockChain(ctx, d, "")
		if err != nil {
			return err
		}
		defer func() { _ = lock.Release() }()
	}
	done, err := chain.Clean(g.Dir, o)
	if c.MaxAge > 0 {
		done.MaxAge = view.AgeText(time.Duration(c.MaxAge))
	}
	if c.JSON {
		if werr := indentedJSON(g.stdout, done); werr != nil {
			return werr
		}
	} else if werr := view.WriteChainsCleaned(g.stdout, done); werr != nil {
		return werr
	}
	return err
}

// chainsIdle refuses to clean while a chain runs in the workspace: it
// holds .ralph/loop.lock under its id.
func chainsIdle(d runfiles.Dir, ids []string) error {
	held, holder := runfiles.LockHeld(d.Lock())
	if !held {
		return nil
	}
	for _, id := range ids {
		if holder.RunID == id {
			return withHint(fmt.Errorf("chain %s runs in this workspace (pid %d, started %s)", id, holder.PID, holder.StartedAt.Local().Format(time.DateTime)),
				"clean once it has ended, or stop it with `ralph stop` first")
		}
	}
	return nil
}

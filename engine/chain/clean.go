package chain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// OnDisk is a chain run as `ralph chain clean` judges it: how it stands,
// since when it is idle and what it keeps on disk.
type OnDisk struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Status Status `json:"status,omitempty"`
	// UpdatedAt is when its state last changed: when it ended, for a chain
	// that ended; its age is measured from it.
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	AgeSeconds int64     `json:"age_seconds"`
	// Bytes is what its directory holds: its state and its steps' runs.
	Bytes int64 `json:"bytes"`
	// Dir is its directory, relative to the workspace.
	Dir string `json:"dir"`
}

// Kept is a chain run that CleanOptions would let go that Clean kept,
// with why.
type Kept struct {
	OnDisk
	Why string `json:"why"`
}

// Cleaned is what Clean did, or with DryRun would do.
type Cleaned struct {
	DryRun bool `json:"dry_run"`
	// MaxAge and Keep are the bounds asked for ("" and 0 when not given).
	MaxAge  string   `json:"max_age,omitempty"`
	Keep    int      `json:"keep,omitempty"`
	Removed []OnDisk `json:"removed"`
	Kept    []Kept   `json:"kept"`
	// Freed is what the removed chains kept on disk, in bytes.
	Freed int64 `json:"freed_bytes"`
}

// CleanOptions say which chain runs Clean removes: those idle for longer
// than MaxAge (0: any age) and not among the Keep latest (0: none kept
// for being recent).
type CleanOptions struct {
	MaxAge time.Duration
	Keep   int
	// Force removes a chain cut off or stopped short too, which `ralph
	// chain resume` would go on with; never one whose step's loop runs.
	Force  bool
	DryRun bool
	Now    time.Time
}

// Clean removes the chain runs of workspace that o lets go, each with
// its steps' runs, and says which it removed and which it kept: a chain
// whose step's loop runs is kept, and an unfinished one (cut off, or
// stopped short: State.CutShort; its resume goes on with either) unless
// o.Force; a chain.json that cannot be
// read keeps its chain, whose files are then the user's to judge. The
// caller holds the chain lock (.ralph/chains/chain.lock), so that no
// chain starts or goes on meanwhile. A removal that fails stops it, with
// what was removed before reported.
func Clean(workspace string, o CleanOptions) (Cleaned, error) {
	done := Cleaned{DryRun: o.DryRun, Keep: o.Keep, Removed: []OnDisk{}, Kept: []Kept{}}
	chains, err := listOnDisk(workspace, o.Now)
	if err != nil {
		return done, err
	}
	for i, c := range chains {
		if i < o.Keep || (o.MaxAge > 0 && c.age(o.Now) <= o.MaxAge) {
			continue
		}
		if why := c.protected(workspace, o.Force); why != "" {
			done.Kept = append(done.Kept, Kept{OnDisk: c.OnDisk, Why: why})
			continue
		}
		if !o.DryRun {
			if err := runfiles.RemoveChain(workspace, c.ID); err != nil {
				return done, err
			}
		}
		done.Removed = append(done.Removed, c.OnDisk)
		done.Freed += c.Bytes
	}
	return done, nil
}

// chainOnDisk is a chain run listed for Clean, with its state when it
// could be read.
type chainOnDisk struct {
	OnDisk
	state   *State
	loadErr error
}

func (c chainOnDisk) age(now time.Time) time.Duration { return now.Sub(c.UpdatedAt) }

// protected says why c must stay whatever its age: "" when it may go.
func (c chainOnDisk) protected(workspace string, force bool) string {
	switch {
	case runfiles.ChainRunning(workspace, c.ID):
		return "a step's loop runs"
	case c.loadErr != nil:
		return "its chain.json cannot be read: " + c.loadErr.Error()
	case c.state.Status == Running && !force:
		return "unfinished: `ralph chain resume` goes on with it (--force removes it)"
	case c.state.CutShort() && !force:
		return fmt.Sprintf("stopped short at step %d: `ralph chain resume` goes on with it (--force removes it)", c.state.Current)
	}
	return ""
}

// listOnDisk lists the workspace's chain runs, latest first: by when their
// state last changed, a chain whose chain.json cannot be read by its
// directory's time.
func listOnDisk(workspace string, now time.Time) ([]chainOnDisk, error) {
	d := runfiles.In(workspace)
	ids, err := runfiles.ChainRuns(workspace)
	if err != nil {
		return nil, err
	}
	chains := make([]chainOnDisk, 0, len(ids))
	for _, id := range ids {
		c := chainOnDisk{OnDisk: OnDisk{ID: id, Bytes: runfiles.ChainBytes(workspace, id), Dir: filepath.Join(runfiles.DirName, runfiles.ChainsDir, id)}}
		c.state, c.loadErr = Load(d, id)
		switch {
		case c.loadErr == nil:
			c.Name, c.Status, c.UpdatedAt = c.state.Plan.Name, c.state.Status, c.state.UpdatedAt
		case errors.Is(c.loadErr, ErrNoChain):
			c.loadErr = errors.New("there is none")
		}
		if fi, err := os.Lstat(d.Chain(id)); err == nil && c.UpdatedAt.IsZero() {
			c.UpdatedAt = fi.ModTime()
		}
		c.AgeSeconds = int64(c.age(now).Seconds())
		chains = append(chains, c)
	}
	slices.SortStableFunc(chains, func(a, b chainOnDisk) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return chains, nil
}

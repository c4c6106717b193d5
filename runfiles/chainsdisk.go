package runfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// ChainRuns are the ids of the workspace's chain runs: the directories
// under .ralph/chains/, sorted; a link where one belongs is skipped,
// never followed; none when there are no chains.
func ChainRuns(workspace string) ([]string, error) {
	d := In(workspace)
	chains := filepath.Join(d.Path(), ChainsDir)
	if err := ralphdir.CheckPath(d.Path(), chains); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := os.ReadDir(chains)
	if err != nil {
		return nil, fmt.Errorf("list chain runs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		// ReadDir's type comes from lstat: a link is not a directory here.
		if e.IsDir() && validRunDir(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// ChainBytes is what chain run id keeps on disk: its state and its steps'
// runs, links not followed.
func ChainBytes(workspace, id string) int64 {
	if !validRunDir(id) {
		return 0
	}
	size, _ := treeSize(In(workspace).Chain(id))
	return size
}

// ChainRunning reports whether a loop runs in one of chain run id's steps
// (a step's loop.lock is held): one that outlived its chain, killed where
// a step's loop does not die with it.
func ChainRunning(workspace, id string) bool {
	d := In(workspace)
	steps, _ := os.ReadDir(d.Chain(id))
	for _, s := range steps {
		if n, ok := stepNumber(s.Name()); ok && s.IsDir() {
			if held, _ := LockHeld(d.ChainStep(id, n).Lock()); held {
				return true
			}
		}
	}
	return false
}

// RemoveChain removes chain run id: its directory under .ralph/chains/
// (chain.json and every step's loop, runs and handoff), and
// .ralph/current-chain when it names id, so that the views no longer look
// for it. It works through an os.Root opened on .ralph/, as RemoveRun
// does: a link planted anywhere is removed, never followed, and a .ralph/
// or .ralph/chains/ that is itself a link is refused.
func RemoveChain(workspace, id string) error {
	d := In(workspace)
	if !validRunDir(id) {
		return fmt.Errorf("remove chain %q: not a chain run's name", id)
	}
	if err := ralphdir.Check(d.Path()); err != nil {
		return err
	}
	if err := ralphdir.CheckPath(d.Path(), filepath.Join(d.Path(), ChainsDir)); err != nil {
		return err
	}
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return fmt.Errorf("remove chain %s: %w", id, err)
	}
	defer root.Close()
	if err := root.RemoveAll(filepath.Join(ChainsDir, id)); err != nil {
		return fmt.Errorf("remove chain %s: %w", id, err)
	}
	current, err := ralphdir.ReadFile(d.Path(), d.CurrentChain())
	if err == nil && strings.TrimSpace(string(current)) == id {
		if err := root.Remove(CurrentChainFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove chain %s: %w", id, err)
		}
	}
	return nil
}

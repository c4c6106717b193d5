package runfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ChainStepDir is the directory of one step of a chain run, where that
// step's loop keeps its files (Dir.ChainStep).
type ChainStepDir struct {
	Chain string // the chain run's id
	Step  int    // from 1
	Dir   Dir
}

// ChainStepDirs are the step directories of every chain run of the
// workspace (.ralph/chains/<run>/step-N), by chain run then step. A
// chain's files are as hostile as any under .ralph/: a link, where a
// directory of chains, of a run or of a step belongs, is skipped, never
// followed; none when there are no chains.
func ChainStepDirs(workspace string) ([]ChainStepDir, error) {
	d := In(workspace)
	runs, err := ChainRuns(workspace)
	if err != nil {
		return nil, err
	}
	var out []ChainStepDir
	for _, run := range runs {
		steps, err := os.ReadDir(filepath.Join(d.Path(), ChainsDir, run))
		if err != nil {
			continue // a run's directory unreadable: the others still count
		}
		var found []ChainStepDir
		for _, s := range steps {
			n, ok := stepNumber(s.Name())
			if ok && s.IsDir() {
				found = append(found, ChainStepDir{Chain: run, Step: n, Dir: d.ChainStep(run, n)})
			}
		}
		slices.SortFunc(found, func(a, b ChainStepDir) int { return a.Step - b.Step })
		out = append(out, found...)
	}
	return out, nil
}

// stepNumber is N of a step directory's name step-N.
func stepNumber(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, chainStepPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// ChainStepOf is the chain step whose directory d is; ok is false for a
// workspace's own .ralph.
func ChainStepOf(d Dir) (ChainStepDir, bool) {
	rel := d.Rel()
	if !isChainStepRel(rel) {
		return ChainStepDir{}, false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	n, ok := stepNumber(parts[3])
	return ChainStepDir{Chain: parts[2], Step: n, Dir: d}, ok
}

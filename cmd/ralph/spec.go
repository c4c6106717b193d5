package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/engine/config"
)

// defaultSpec is the file `ralph run` works through when the config gives
// it nothing else to do.
const defaultSpec = "SPEC.md"

// specLimit is --all's iteration limit: a spec is a finite list, and a
// runaway loop costs money.
const specLimit = 100

// specInputs are the SPEC-mode flags.
type specInputs struct {
	file string // --spec
	n    int    // -n
	all  bool   // --all
}

// given reports whether -n or --all was given, which only SPEC mode reads.
func (in specInputs) given() bool { return in.n > 0 || in.all }

// loadConfigOrDefault loads the config; in SPEC mode a missing ralph.yml is
// fine, because the spec is the whole task and only the backend is needed.
func loadConfigOrDefault(dir string, in loopInputs) (*config.Config, string, error) {
	cfg, path, err := loadConfigWith(dir, in.configs, in.hats)
	if errors.Is(err, config.ErrNotFound) && in.spec.file == "" && fileExists(filepath.Join(dir, defaultSpec)) {
		return config.Default(), "", nil
	}
	if errors.Is(err, config.ErrNotFound) && in.spec.file != "" {
		return config.Default(), "", nil
	}
	return cfg, path, err
}

// specFile decides whether this run works through a spec: --spec FILE, or
// a SPEC.md in the workspace when the config has no hats and no objective.
func specFile(dir string, in loopInputs, cfg *config.Config, objectiveErr error) (string, error) {
	if in.spec.file != "" {
		path := in.spec.file
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if !fileExists(path) {
			return "", withHint(fmt.Errorf("no spec at %s", path), "write the tasks as markdown checkboxes (- [ ] task) in that file")
		}
		return path, nil
	}
	if objectiveErr != nil && len(cfg.Hats) == 0 && fileExists(filepath.Join(dir, defaultSpec)) {
		return filepath.Join(dir, defaultSpec), nil
	}
	return "", nil
}

// applySpec shapes the run for a spec: its boxes are the task, checking
// them is progress, and all checked is done.
func (s *loopSetup) applySpec(path string, in specInputs) error {
	items, err := checklist.Read(path)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return withHint(fmt.Errorf("%s has no task boxes", path), "list the tasks as markdown checkboxes: - [ ] first task")
	}
	s.specFile = path
	s.objective, s.source = specObjective(path), path
	el := &s.cfg.EventLoop
	el.CompletionConfirmations = 1
	switch {
	case in.all:
		el.MaxIterations = specLimit
	case in.n > 0:
		el.MaxIterations = in.n
	default:
		el.MaxIterations = 1
	}
	return nil
}

func specObjective(path string) string {
	return fmt.Sprintf(`Work through the specification in %s. Each markdown checkbox in it is a task: "- [ ]" is open, "- [x]" is done.

Each iteration, take the first open task and do all of it:
1. Read the spec and the code it touches; do not guess.
2. Implement the task completely, with tests where the code has tests.
3. Verify it: build, run the tests and linters the repository uses, and fix what fails.
4. Mark the task done in %s by changing its "- [ ]" to "- [x]"; change no other box.
5. Commit the work and the spec together, with a message that names the task.

Do one task per iteration, then stop. ralph counts a checked box as progress and ends the run when every box is checked.`, filepath.Base(path), filepath.Base(path))
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// notSpecMode refuses -n and --all in a run that has an objective of its
// own: they would be ignored, and the run would take the config's limit.
func notSpecMode(in specInputs) error {
	flag := "-n"
	if in.all {
		flag = "--all"
	}
	return withHint(fmt.Errorf("%s is for SPEC mode, and this run is not one: it has an objective or hats of its own", flag),
		"set the limit with --max-iterations N, or work through a checklist with --spec FILE")
}

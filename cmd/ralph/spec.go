package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/runfiles"
)

// defaultSpec is the file `ralph run` works through when the config gives
// it nothing else to do.
const defaultSpec = "SPEC.md"

// specLimit is --all's iteration limit: a spec is a finite list, and a
// runaway loop costs money.
const specLimit = 100

// runMode is what kind of run the loop command makes, and why.
type runMode struct {
	kind  string             // runfiles.ModeLoop or runfiles.ModeSpec
	start runfiles.StartMode // a new run, a resumed one, or a fresh one
	spec  string             // SPEC mode: the checklist, absolute
	why   string             // for the debug log
}

// decideMode decides, once, what the run is: a hats loop or SPEC mode, new
// or resumed. ch are the flags with what the resumed run recorded; cfg is
// the loaded config (config.Default() when cfgErr says there was none),
// and objErr why it has no objective. SPEC mode is --spec FILE (or the
// resumed run's spec), or a SPEC.md in the workspace when the config has
// no hats and no objective; a missing ralph.yml is fine then, because the
// spec is the whole task and only the backend is needed.
func decideMode(dir string, ch runChoices, cfg *config.Config, cfgErr, objErr error) (runMode, error) {
	m := runMode{kind: runfiles.ModeLoop, start: ch.start}
	defaultSpecPath := filepath.Join(dir, defaultSpec)
	if cfgErr != nil && (!errors.Is(cfgErr, config.ErrNotFound) || ch.spec == "" && !fileExists(defaultSpecPath)) {
		return m, cfgErr
	}
	switch {
	case ch.spec != "":
		m.kind, m.spec, m.why = runfiles.ModeSpec, inWorkspace(dir, ch.spec), "--spec "+ch.spec
		if ch.start == runfiles.StartResume && ch.prev != nil && ch.prev.Mode == runfiles.ModeSpec {
			m.why = "the resumed run works through " + ch.prev.SpecFile
		}
		if !fileExists(m.spec) {
			return m, withHint(fmt.Errorf("no spec at %s", m.spec), "write the tasks as markdown checkboxes (- [ ] task) in that file")
		}
	case objErr != nil && len(cfg.Hats) == 0 && fileExists(defaultSpecPath):
		m.kind, m.spec, m.why = runfiles.ModeSpec, defaultSpecPath, "the config has no hats and no objective, and there is a "+defaultSpec
	case ch.n > 0 || ch.all:
		return m, notSpecMode(ch.all)
	case objErr != nil && ch.start != runfiles.StartResume:
		return m, objErr
	case ch.start == runfiles.StartResume:
		m.why = "resuming the run in .ralph"
	default:
		m.why = "the run has an objective"
	}
	if m.kind == runfiles.ModeSpec {
		items, err := checklist.Read(m.spec)
		if err != nil {
			return m, err
		}
		if len(items) == 0 {
			return m, withHint(fmt.Errorf("%s has no task boxes", m.spec), "list the tasks as markdown checkboxes: - [ ] first task")
		}
	}
	return m, nil
}

// specLimitOf is SPEC mode's iteration limit: --all's, -n's, or one.
func specLimitOf(ch runChoices) int {
	switch {
	case ch.all:
		return specLimit
	case ch.n > 0:
		return ch.n
	}
	return 1
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir()
}

// notSpecMode refuses -n and --all in a run that has an objective of its
// own: they would be ignored, and the run would take the config's limit.
func notSpecMode(all bool) error {
	flag := "-n"
	if all {
		flag = "--all"
	}
	return withHint(fmt.Errorf("%s is for SPEC mode, and this run is not one: it has an objective or hats of its own", flag),
		"set the limit with --max-iterations N, or work through a checklist with --spec FILE")
}

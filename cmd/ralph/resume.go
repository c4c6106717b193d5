package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/config"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/runfiles"
)

// runChoices are the choices that shape a run: the loop command's flags,
// with what the resumed run's launch record adds. choices fills them once;
// engineOptions turns them into the engine's Options.
type runChoices struct {
	configs        []string
	hats           string   // -H: a hat collection laid over the config
	sets           []string // --set: config keys laid over everything
	prompt         string
	promptFile     string
	backend        string
	model          string         // --model
	maxIterations  int            // 0: not given
	maxRuntime     *time.Duration // nil: not given; 0 means no limit
	stuckThreshold *int           // nil: not given; 0 turns the check off
	spec           string         // --spec, or the resumed run's spec
	n              int            // SPEC mode's -n
	all            bool           // SPEC mode's --all
	start          runfiles.StartMode
	wait           bool
	prev           *runfiles.Launch // the resumed run's launch record; nil when none
	stateDir       runfiles.Dir     // a chain step's directory; "" for the workspace's .ralph
	// pin is where the workspace's repository is when this ralph made
	// the worktree (--worktree); zero otherwise.
	pin workspacegit.Pin
}

// choices reads the flags and, on --resume, the run's launch record.
func (c *loopCmd) choices(dir string) (runChoices, error) {
	ch := runChoices{configs: c.Config, hats: c.Hats, sets: c.Set, prompt: c.Prompt, promptFile: c.PromptFile,
		backend: c.Backend, model: c.Model, maxIterations: int(c.MaxIterations), maxRuntime: c.MaxRuntime.Value(),
		stuckThreshold: c.StuckThreshold.Value(), spec: c.Spec, n: int(c.N), all: c.All,
		start: runfiles.StartNew, wait: c.Wait, pin: c.pin}
	files := runfiles.In(dir)
	if c.StateDir != "" {
		d, err := runfiles.StepDirIn(dir, c.StateDir)
		if err != nil {
			return ch, withHint(fmt.Errorf("--state-dir: %w", err), "--state-dir is how `ralph chain run` starts its steps; run the loop without it")
		}
		ch.stateDir, files = d, d
	}
	switch {
	case c.Fresh:
		ch.start = runfiles.StartFresh
	case c.Resume:
		ch.start = runfiles.StartResume
		prev, err := runfiles.PreviousLaunchIn(files)
		if err != nil {
			return ch, err
		}
		if err := ch.resumeFrom(prev, dir); err != nil {
			return ch, err
		}
	}
	return ch, nil
}

// resumeFrom fills in what the resume's command line leaves out with what
// the run was started with (prev, nil when the run recorded nothing), so
// it goes on as it was: in SPEC mode with its spec, with its -c files, -H
// hats, --backend and --model, and with the limits its flags set. What the resume's
// flags say wins — that is how a run that hit a limit goes on with a
// higher one — but not the spec: the run's objective is that spec's.
func (ch *runChoices) resumeFrom(prev *runfiles.Launch, dir string) error {
	if prev == nil {
		return nil
	}
	ch.prev = prev
	if err := ch.checkSameSpec(prev, dir); err != nil {
		return err
	}
	if prev.Mode == runfiles.ModeSpec {
		ch.spec = inWorkspace(dir, prev.SpecFile)
	}
	if len(ch.configs) == 0 {
		ch.configs = slices.Clone(prev.Configs)
	}
	ch.hats = cmp.Or(ch.hats, prev.Hats)
	if err := refuseMaskedSets(prev.Sets, ch.sets, "ralph loop --resume"); err != nil {
		return err
	}
	ch.sets = config.LayerSets(prev.Sets, ch.sets)
	ch.backend = cmp.Or(ch.backend, prev.Backend)
	ch.model = cmp.Or(ch.model, prev.Model)
	if ch.maxIterations == 0 && ch.n == 0 && !ch.all {
		ch.maxIterations = prev.MaxIterations
	}
	if ch.stuckThreshold == nil {
		ch.stuckThreshold = prev.StuckThreshold
	}
	if ch.maxRuntime == nil && prev.MaxRuntimeMS != nil {
		d := time.Duration(*prev.MaxRuntimeMS) * time.Millisecond
		ch.maxRuntime = &d
	}
	return nil
}

// checkSameSpec refuses a --spec on resume that is not the run's own: the
// run's objective was written for its spec, and a run that was not in
// SPEC mode cannot become one.
func (ch *runChoices) checkSameSpec(prev *runfiles.Launch, dir string) error {
	if ch.spec == "" {
		return nil
	}
	given := inWorkspace(dir, ch.spec)
	switch {
	case prev.Mode != runfiles.ModeSpec:
		return withHint(fmt.Errorf("--spec %s: the run to resume is not a SPEC-mode run", ch.spec),
			"resume without --spec, or start a new run on the spec with --fresh")
	case given != inWorkspace(dir, prev.SpecFile):
		return withHint(fmt.Errorf("--spec %s: the run to resume works through %s", ch.spec, prev.SpecFile),
			"resume without --spec, or start a new run on the other spec with --fresh")
	}
	return nil
}

// launch is what the run records of its command line (see runfiles.Launch).
// In SPEC mode the iteration limit always comes from the command line (-n,
// --all, or one iteration), so it is recorded whichever way it was set.
func (ch runChoices) launch(dir string, mode runMode, maxIterations int) *runfiles.Launch {
	l := &runfiles.Launch{Mode: mode.kind, Hats: ch.hats, Sets: ch.sets, Backend: ch.backend, Model: ch.model,
		MaxIterations: ch.maxIterations, StuckThreshold: ch.stuckThreshold}
	for _, c := range ch.configs {
		l.Configs = append(l.Configs, relativeTo(dir, c))
	}
	if mode.kind == runfiles.ModeSpec {
		l.SpecFile, l.MaxIterations = relativeTo(dir, mode.spec), maxIterations
	}
	if ch.maxRuntime != nil {
		ms := ch.maxRuntime.Milliseconds()
		l.MaxRuntimeMS = &ms
	}
	return l
}

// inWorkspace is path made absolute against the workspace dir.
func inWorkspace(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// relativeTo is path relative to the workspace dir when it is inside it,
// so a recorded path survives the workspace being moved; else absolute.
func relativeTo(dir, path string) string {
	abs := inWorkspace(dir, path)
	rel, err := filepath.Rel(dir, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return abs
	}
	return rel
}

package main

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/engine"
)

// resumeFrom fills in what the resume's command line leaves out with what
// the run was started with (prev, nil when the run recorded nothing), so
// it goes on as it was: in SPEC mode with its spec, with its -c files, -H
// hats and --backend, and with the limits its flags set. What the resume's
// flags say wins — that is how a run that hit a limit goes on with a
// higher one — but not the spec: the run's objective is that spec's.
func (in *loopInputs) resumeFrom(prev *engine.Launch, dir string) error {
	if prev == nil {
		return nil
	}
	if err := in.checkSameSpec(prev, dir); err != nil {
		return err
	}
	if prev.Mode == engine.ModeSpec {
		in.spec.file = inWorkspace(dir, prev.SpecFile)
	}
	if len(in.configs) == 0 {
		in.configs = slices.Clone(prev.Configs)
	}
	in.hats = cmp.Or(in.hats, prev.Hats)
	in.backend = cmp.Or(in.backend, prev.Backend)
	if in.maxIterations == 0 && !in.spec.given() {
		in.maxIterations = prev.MaxIterations
	}
	if in.stuckThreshold == nil {
		in.stuckThreshold = prev.StuckThreshold
	}
	if in.maxRuntime == nil && prev.MaxRuntimeMS != nil {
		d := time.Duration(*prev.MaxRuntimeMS) * time.Millisecond
		in.maxRuntime = &d
	}
	return nil
}

// checkSameSpec refuses a --spec on resume that is not the run's own: the
// run's objective was written for its spec, and a run that was not in
// SPEC mode cannot become one.
func (in *loopInputs) checkSameSpec(prev *engine.Launch, dir string) error {
	if in.spec.file == "" {
		return nil
	}
	given := inWorkspace(dir, in.spec.file)
	switch {
	case prev.Mode != engine.ModeSpec:
		return withHint(fmt.Errorf("--spec %s: the run to resume is not a SPEC-mode run", in.spec.file),
			"resume without --spec, or start a new run on the spec with --fresh")
	case given != inWorkspace(dir, prev.SpecFile):
		return withHint(fmt.Errorf("--spec %s: the run to resume works through %s", in.spec.file, prev.SpecFile),
			"resume without --spec, or start a new run on the other spec with --fresh")
	}
	return nil
}

// launch is what the run records of its command line (see engine.Launch).
// In SPEC mode the iteration limit always comes from the command line (-n,
// --all, or one iteration), so it is recorded whichever way it was set.
func (in loopInputs) launch(dir string, s *loopSetup) *engine.Launch {
	l := &engine.Launch{Mode: engine.ModeLoop, Hats: in.hats, Backend: in.backend,
		MaxIterations: in.maxIterations, StuckThreshold: in.stuckThreshold}
	for _, c := range in.configs {
		l.Configs = append(l.Configs, relativeTo(dir, c))
	}
	if s.specFile != "" {
		l.Mode, l.SpecFile = engine.ModeSpec, relativeTo(dir, s.specFile)
		l.MaxIterations = s.cfg.EventLoop.MaxIterations
	}
	if in.maxRuntime != nil {
		ms := in.maxRuntime.Milliseconds()
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

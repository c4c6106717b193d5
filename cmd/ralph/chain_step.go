package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/procgroup"
)

// childStepRunner runs a chain's step as a child `ralph loop` whose files
// live in the step's directory (--state-dir). A child rather than the
// engine in this process: the step gets every part of the loop's wiring
// (config layers, presets, backends and fallbacks, hooks, sandbox, the
// views' files) exactly as `ralph loop` has it, and a step that crashes
// leaves the chain's state untouched. The child leads a process group of
// its own: Ctrl-C in a terminal reaches the chain, which interrupts the
// step's loop once (SIGTERM), as the autopilot interrupts its slots. On
// Linux it is also interrupted when the chain dies (SIGKILL included), so
// that the chain's resume finds the step's loop checkpointed rather than
// still running.
type childStepRunner struct {
	bin       string
	workspace string
	configs   []string // what a preset step's hats are laid over
	quiet     bool
	stderr    io.Writer
	// resumeMaxIterations, when set, raises the max_iterations of the
	// first step resumed (`ralph chain resume --max-iterations`): the
	// step's own limit, which the chain's budget does not set.
	resumeMaxIterations int
}

func (r *childStepRunner) RunStep(ctx context.Context, run chain.StepRun) (int, error) {
	args, err := r.args(run)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(r.bin, args...) //nolint:gosec // ralph runs itself
	cmd.Dir = r.workspace
	cmd.Stdout, cmd.Stderr = r.stderr, r.stderr
	cmd.Env = slices.Concat(os.Environ(), run.Env)
	ownGroup(cmd)
	interruptWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start step %d's loop: %w", run.N, err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// The loop takes SIGTERM as an interrupt: it stops its agent,
			// checkpoints and exits 130, resumable.
			_ = procgroup.Interrupt(cmd.Process.Pid)
		case <-done:
		}
	}()
	err = cmd.Wait()
	close(done)
	if _, exited := errors.AsType[*exec.ExitError](err); err != nil && !exited {
		return 0, fmt.Errorf("run step %d's loop: %w", run.N, err)
	}
	return exitStatus(cmd.ProcessState), nil
}

// args are `ralph loop`'s for the step: its config, its objective in a
// file of the step's directory, the budget left as limits; a resume
// keeps what the loop was started with and lays the budget over it.
func (r *childStepRunner) args(run chain.StepRun) ([]string, error) {
	args := []string{"loop", "--state-dir", run.Dir.Path(), "--wait"}
	if r.quiet {
		args = append(args, "--quiet")
	}
	if run.Resume {
		args = append(args, "--resume")
		if r.resumeMaxIterations > 0 {
			args = append(args, "--max-iterations", strconv.Itoa(r.resumeMaxIterations))
			r.resumeMaxIterations = 0
		}
	} else {
		if run.Step.Preset != "" {
			for _, c := range r.configs {
				args = append(args, "-c", c)
			}
			args = append(args, "-H", run.Step.Preset)
		} else {
			args = append(args, "-c", run.Step.Config)
		}
		if run.Objective != "" {
			path, err := chain.WriteObjective(run)
			if err != nil {
				return nil, err
			}
			args = append(args, "-P", path)
		}
	}
	for _, s := range run.Budget.Sets() {
		args = append(args, "--set", s)
	}
	return args, nil
}

// exitStatus is a finished process's exit status, 128+N for one a
// signal ended, as shells report it.
func exitStatus(ps *os.ProcessState) int {
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if sig, ok := signalOf(ps); ok {
		return 128 + sig
	}
	return exitcode.Failure
}

package chain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/runfiles"
)

// StepRun is one start of a step's loop.
type StepRun struct {
	N    int
	Step Step
	// Dir is the step's directory, where its loop keeps its files.
	Dir runfiles.Dir
	// Objective is the step's objective; empty when Resume.
	Objective string
	// Resume says the step's loop was started before (the chain was cut
	// off) and goes on where it stopped.
	Resume bool
	// Budget is what the step may spend (Budget.ForStep).
	Budget Budget
	// Env names the chain and the step for the step's agent.
	Env []string
}

// Runner runs a step's loop to its end. Its exit status is the loop's;
// an error means the loop could not be run at all. When ctx is done it
// interrupts the loop and waits for it: an interrupted loop checkpoints,
// so the chain's resume resumes it.
type Runner interface {
	RunStep(ctx context.Context, run StepRun) (exitCode int, err error)
}

// Reporter is told what the chain does, for the people watching.
type Reporter interface {
	StepStarting(s *State, run StepRun)
	StepEnded(s *State, rec StepRecord)
}

// Chain runs a chain's steps from its state's current step on.
type Chain struct {
	Dir      runfiles.Dir // the workspace's .ralph
	State    *State
	Runner   Runner
	Reporter Reporter
	Now      func() time.Time
}

// Run runs the steps left, saving the state before and after each, and
// returns when the chain ended or was interrupted; State says how
// (ExitCode, Message). The caller holds the chain lock. An error is a
// failure to run the chain at all (its state unwritable, the loop
// impossible to start); the chain is left where it was, to resume.
func (c *Chain) Run(ctx context.Context) error {
	s := c.State
	for s.Current <= len(s.Plan.Steps) && !s.Ended() {
		done, err := c.step(ctx, s.Current)
		if err != nil || done {
			return err
		}
	}
	if !s.Ended() {
		s.Status, s.ExitCode = Completed, exitcode.OK
		s.Message = fmt.Sprintf("all %d steps completed", len(s.Plan.Steps))
	}
	return Save(c.Dir, s, c.Now())
}

// step runs step n; done says the chain ends (or was interrupted) there.
func (c *Chain) step(ctx context.Context, n int) (done bool, err error) {
	s := c.State
	run, err := c.prepare(n)
	if err != nil || run == nil {
		return true, err
	}
	if err := Save(c.Dir, s, c.Now()); err != nil {
		return true, err
	}
	c.Reporter.StepStarting(s, *run)
	code, err := c.Runner.RunStep(ctx, *run)
	if err != nil {
		return true, err
	}
	rec := s.Record(n)
	out, err := ReadOutcome(run.Dir, run.Step.CompletionTopic, c.Now())
	switch {
	case errors.Is(err, ErrNoRun):
		rec.Message = fmt.Sprintf("its loop exited with status %d before it started a run; its output says why", code)
	case err != nil:
		return true, fmt.Errorf("read step %d's run: %w", n, err)
	}
	rec.RunID, rec.Reason, rec.ExitCode, rec.EndedAt = out.RunID, string(out.Reason), code, c.Now()
	rec.Spent = Spent{Steps: 1, Runtime: out.Spent.Runtime, CostUSD: out.Spent.CostUSD, Tokens: out.Spent.Tokens}
	if out.Message != "" {
		rec.Message = out.Message
	}
	done = c.settle(ctx, rec, out)
	c.Reporter.StepEnded(s, *rec)
	return done, Save(c.Dir, s, c.Now())
}

// prepare records step n's start (or its resume) and builds its run; nil
// when the budget is spent before it, which ends the chain.
func (c *Chain) prepare(n int) (*StepRun, error) {
	s := c.State
	step := s.Plan.Steps[n-1]
	dir := c.Dir.ChainStep(s.ID, n)
	before := s.SpentBefore(n)
	run := &StepRun{N: n, Step: step, Dir: dir, Budget: s.Plan.Budget.ForStep(before, step.Limits), Env: []string{
		"RALPH_STEP_DIR=" + dir.Path(),
		"RALPH_CHAIN_RUN=" + s.ID,
		fmt.Sprintf("RALPH_CHAIN_STEP=%d", n),
	}}
	if rec := s.Record(n); rec != nil {
		rel, err := runfiles.CurrentLogRel(dir.Path())
		if err != nil {
			return nil, err
		}
		// A step whose loop never wrote its log is started again, as new.
		run.Resume = rel != ""
		rec.Resumes++
	} else {
		if l := s.Plan.Budget.Exhausted(before); l != "" {
			c.stop(exitcode.Limit, fmt.Sprintf("the chain's budget is spent (%s) before step %d (%s)",
				s.Plan.Budget.Describe(l, before), n, step.Label()))
			return nil, Save(c.Dir, s, c.Now())
		}
		s.Steps = append(s.Steps, StepRecord{N: n, Label: step.Label(), Status: Running, StartedAt: c.Now(), Spent: Spent{Steps: 1}})
	}
	if !run.Resume {
		prev, err := c.handoff(n)
		if err != nil {
			return nil, err
		}
		run.Objective = Objective(s.Plan, n, prev)
	}
	return run, nil
}

// handoff is what step n-1 passes to step n; nil for the first step.
func (c *Chain) handoff(n int) (*Handoff, error) {
	if n == 1 {
		return nil, nil
	}
	s := c.State
	prevDir := c.Dir.ChainStep(s.ID, n-1)
	out, err := ReadOutcome(prevDir, s.Plan.Steps[n-2].CompletionTopic, c.Now())
	if err != nil {
		return nil, fmt.Errorf("read step %d's run for its handoff: %w", n-1, err)
	}
	return HandoffOf(c.Dir, s, n-1, out)
}

// settle decides, from how step rec's loop ended, whether the chain goes
// on; done says it does not.
func (c *Chain) settle(ctx context.Context, rec *StepRecord, out Outcome) (done bool) {
	s := c.State
	label := fmt.Sprintf("step %d (%s)", rec.N, rec.Label)
	switch {
	case rec.ExitCode == exitcode.OK && out.Reason == runfiles.ReasonCompleted:
		rec.Status = Completed
		s.Current++
		return false
	case rec.ExitCode == exitcode.Interrupted || ctx.Err() != nil:
		// Left running: the resume goes on with this step's loop.
		s.ExitCode, s.Message = exitcode.Interrupted, label+" was interrupted; resume the chain with `ralph chain resume`"
		return true
	case rec.ExitCode == exitcode.OK:
		rec.Status = Stopped
		c.stop(exitcode.OK, fmt.Sprintf("%s ended without completing (%s): %s", label, reasonOr(out.Reason), rec.Message))
		return true
	}
	rec.Status = Stopped
	spent := s.Spent()
	if l := s.Plan.Budget.Exhausted(Spent{Runtime: spent.Runtime, CostUSD: spent.CostUSD, Tokens: spent.Tokens}); l != "" && rec.ExitCode == exitcode.Limit {
		c.stop(exitcode.Limit, fmt.Sprintf("the chain's budget is spent (%s) during %s: %s", s.Plan.Budget.Describe(l, spent), label, rec.Message))
		return true
	}
	c.stop(rec.ExitCode, fmt.Sprintf("%s ended without completing (%s, exit status %d): %s", label, reasonOr(out.Reason), rec.ExitCode, rec.Message))
	return true
}

func reasonOr(r runfiles.Reason) string {
	if r == "" {
		return "no run"
	}
	return string(r)
}

func (c *Chain) stop(code int, msg string) {
	c.State.Status, c.State.ExitCode, c.State.Message = Stopped, code, msg
}

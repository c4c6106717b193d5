package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// running runs the agent for the iteration.
func (e *Engine) running(ctx context.Context) (runfiles.Phase, error) {
	iterCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopNow := e.stop.OnNow(cancel)
	defer stopNow()

	e.clearStaleCommitLocks()
	raw, err := e.openRawOutput(cancel)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	run := events.AgentRun{
		Prompt:      e.iter.info.Prompt,
		Dir:         e.opts.Workspace,
		Env:         e.agentEnv(),
		RawOutput:   raw,
		Timeout:     e.opts.Settings.IterationTimeout,
		IdleTimeout: e.opts.Settings.IdleTimeout,
		ForceKill:   e.opts.ForceKill,
		Started: func(pid int) {
			e.recordAgent(pid)
			e.fault(FaultAgentStarted)
		},
	}
	defer e.forgetAgent()
	it := &e.iter
	it.before = e.snapshot(ctx)
	it.treeBefore, it.treeErr = e.workTree(ctx, it.before)
	it.specBefore = e.specItems()
	info := it.info
	watch := e.watchGit(e.confined(info.Hat.ID))
	res, err := it.backend.Run(iterCtx, run, func(a events.Activity) {
		e.opts.Reporter.Activity(info, a)
	})
	defer func() {
		// Whatever else ended the iteration, ralph's git must not run
		// on a repository the agent armed: not even to record it.
		if changed := watch.changed(); len(changed) > 0 {
			e.armed("the agent of hat "+info.Hat.ID, changed)
		}
	}()
	rawErr := raw.Close()
	it.result, it.interrupted, it.switched, it.switchWait = res, false, nil, time.Time{}
	switch {
	case rawErr != nil:
		it.interrupted = true
		e.ending = e.terminate(runfiles.ReasonFatal, rawErr.Error())
		e.fatal = rawErr
	case err == nil:
		// A far rate limit or the provider's failure moves the iteration
		// to the next backend of its chain; without one, a login is
		// needed before anything can run.
		it.switched = e.switchFor(res, nil)
		if it.switched == nil && res.Failure == events.FailureAuth {
			e.ending = e.terminate(runfiles.ReasonFatal, res.FailureMessage)
			e.fatal = &AgentAuthError{Backend: info.Backend, Message: res.FailureMessage}
		}
	case ctx.Err() != nil:
		it.interrupted = true
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted by a signal while hat "+info.Hat.ID+" was running")
	case iterCtx.Err() != nil:
		it.interrupted = true
		e.ending = e.terminateBy(runfiles.ReasonStopped, runfiles.CauseStopNow, "a stop --now request interrupted the running iteration")
	default:
		// The agent could not run at all: another backend of the chain
		// may, else the run cannot go on.
		if it.switched = e.switchFor(res, err); it.switched != nil {
			it.result.Failure, it.result.FailureMessage = events.FailureProvider, err.Error()
			break
		}
		it.interrupted = true
		e.ending = e.terminate(runfiles.ReasonFatal, err.Error())
		e.fatal = err
	}
	return runfiles.PhaseCollecting, nil
}

func (e *Engine) agentEnv() []string {
	abs := filepath.Join(e.opts.Workspace, e.st.EventsFile)
	env := append([]string{}, e.opts.AgentEnv...)
	return append(env,
		"RALPH_EVENTS_FILE="+abs,
		"RALPH_ITERATION="+strconv.Itoa(e.iter.info.N),
		"RALPH_HAT="+e.iter.info.Hat.ID,
		"RALPH_RUN_ID="+e.st.RunID,
		"RALPH_BIN="+e.opts.RalphBin,
		"RALPH_WORKSPACE="+e.opts.Workspace,
	)
}

// openRawOutput creates runs/<run-id>/iter-NNNN.jsonl for the agent's raw
// output. A repeated iteration (after an interruption or a rate limit) gets
// its own file, so no attempt's output is lost; its number is its prompt's
// (keepPrompt), so the two sit side by side. stop stops the agent.
func (e *Engine) openRawOutput(stop func()) (*rawOutput, error) {
	dir := e.files().Run(e.st.RunID)
	if err := ralphdir.MkdirAll(e.dir, dir); err != nil {
		return nil, storageError(OpRawOutput, dir, err)
	}
	for attempt := max(e.iter.attempt, 1); ; attempt++ {
		path := filepath.Join(dir, runfiles.RawOutput(e.iter.info.N, attempt))
		f, err := ralphdir.OpenFile(e.dir, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ralphdir.FileMode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, storageError(OpRawOutput, path, err)
		}
		return &rawOutput{f: f, stop: stop, fault: func() error { return e.writeFault(FileRawOutput) }}, nil
	}
}

// rawOutput keeps one attempt's raw agent output. The first write that
// fails stops the agent: the disk is full or failing, and an agent left to
// run would spend money on work ralph could not record.
type rawOutput struct {
	f     *os.File
	stop  func()
	fault func() error

	mu     sync.Mutex
	err    error
	closed bool
}

func (r *rawOutput) Write(p []byte) (int, error) {
	err := r.fault()
	n := 0
	if err == nil {
		n, err = r.f.Write(p)
	}
	if err != nil {
		r.fail(err)
	}
	return n, err
}

func (r *rawOutput) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = storageError(OpRawOutput, r.f.Name(), err)
		r.stop()
	}
}

// Close closes the file once and returns the first error of its writes
// or of closing it, as a *StorageError.
func (r *rawOutput) Close() error {
	r.mu.Lock()
	closed := r.closed
	r.closed = true
	r.mu.Unlock()
	if !closed {
		if err := r.f.Close(); err != nil {
			r.fail(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

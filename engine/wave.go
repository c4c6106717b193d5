package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// A wave is one iteration of a hat with concurrency above 1 whose pending
// events include a wave (`ralph wave emit`): one worker per event, each a
// fresh agent with the event alone in its prompt and an events file of its
// own, up to the hat's concurrency at once, all in the one working tree
// (docs/waves.md says why). It counts as one iteration.
//
// Its lines (runfiles/wave.go) make it safe to kill at any instant:
// wave.started records the wave with iteration.started; each worker that
// ends is recorded by wave.worker_finished with the size its events file
// had, so the file, up to there, is the worker's result; once every worker
// has one, their lines are merged into the log, then wave.finished and
// iteration.finished, in one write. A resume finds the wave in the fold,
// runs again the workers with no wave.worker_finished (in files of their
// own), and merges what the fold does not count as merged already.

// WaveReporter is a Reporter that wants to hear of a wave's progress: it
// started, and each of its workers ended (done counts those that have,
// failed those of them with no result: failed, missed or stopped).
type WaveReporter interface {
	WaveProgress(it IterationInfo, w runfiles.WaveProgress)
}

// reportWave tells the Reporter how the wave in flight is going.
func (e *Engine) reportWave() {
	wr, ok := e.opts.Reporter.(WaveReporter)
	if !ok || e.st.Wave == nil {
		return
	}
	e.reportMu.Lock()
	defer e.reportMu.Unlock()
	wr.WaveProgress(e.iter.info, e.st.Wave.Progress())
}

// workerResult is one worker's end, as its goroutine reports it.
type workerResult struct {
	rec runfiles.WaveWorkerRecord
	// cut says the worker was cut off by a signal or `ralph stop --now`:
	// it is not recorded, so a resume runs it again.
	cut bool
	// err is a failure to keep the worker's files: the run ends as fatal.
	err error
	// res and runErr are what the agent's run returned, for the move to
	// another backend of the chain (moveWorker).
	res    events.AgentResult
	runErr error
}

// waveOf picks the wave a wave hat's iteration runs from its pending
// events: the one with the smallest id, as ralph-orchestrator does, its
// events in index order. id is "" when the events hold no wave.
func waveOf(offsets []int64, evs []events.Event) (id string, waveOffsets []int64, waveEvents []events.Event) {
	for _, ev := range evs {
		if ev.InWave() && (id == "" || ev.WaveID < id) {
			id = ev.WaveID
		}
	}
	if id == "" {
		return "", nil, nil
	}
	idx := []int{}
	for i, ev := range evs {
		if ev.InWave() && ev.WaveID == id {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(evs[a].WaveIndex, evs[b].WaveIndex) })
	for _, i := range idx {
		waveOffsets = append(waveOffsets, offsets[i])
		waveEvents = append(waveEvents, evs[i])
	}
	return id, waveOffsets, waveEvents
}

// startWave records the start of a wave's iteration: iteration.started
// and wave.started, in one write.
func (e *Engine) startWave(hat hats.Hat, id string, offsets []int64) (runfiles.Phase, error) {
	n := e.st.Iteration + 1
	backend := e.pick(hat.ID)
	rec := runfiles.WaveStartedRecord{Iteration: n, Hat: hat.ID, WaveID: id, Total: len(offsets), Concurrency: hat.Concurrency,
		Events: offsets, WorkerTimeoutMS: e.opts.Hats.WorkerTimeout(hat).Milliseconds(),
		DeadlineMS: e.opts.Hats.WaveDeadline(hat).Milliseconds()}
	if err := e.append(
		runfiles.RalphEvent(runfiles.TopicIterationStarted, runfiles.IterationStartedRecord{
			Iteration: n, Hat: hat.ID, Events: offsets, Backend: backend.Name(), Sandbox: sandboxOf(backend), DisallowedTools: deniedOf(backend)}),
		runfiles.RalphEvent(runfiles.TopicWaveStarted, rec),
	); err != nil {
		return "", err
	}
	e.iter = e.waveIteration(hat, n, offsets, backend)
	if err := e.saveAs(runfiles.PhaseWave); err != nil {
		return "", err
	}
	e.opts.Reporter.IterationStarted(e.iter.info)
	e.reportWave()
	return runfiles.PhaseWave, nil
}

func (e *Engine) waveIteration(hat hats.Hat, n int, offsets []int64, backend Backend) iteration {
	return iteration{
		info: IterationInfo{N: n, Max: e.opts.Settings.MaxIterations, Hat: hat, Backend: backend.Name(),
			Sandbox: sandboxOf(backend), Started: e.now()},
		events:  offsets,
		backend: backend,
	}
}

// waving runs the workers of the wave in flight that have no result yet,
// then merges the results into the log.
func (e *Engine) waving(ctx context.Context) (runfiles.Phase, error) {
	w := e.st.Wave
	if w == nil {
		return runfiles.PhaseSettling, nil
	}
	if err := e.rejoinWave(w); err != nil {
		return "", err
	}
	if pending := w.Pending(); len(pending) > 0 {
		if err := e.runWorkers(ctx, w, pending); err != nil {
			return "", err
		}
		if e.ending != nil {
			return e.cutWave(w)
		}
	}
	return e.mergeWave(ctx, w)
}

// rejoinWave makes the wave the iteration in flight again after a resume,
// which recorded the iteration as interrupted: iteration.started again,
// with the same number and events.
func (e *Engine) rejoinWave(w *runfiles.WaveState) error {
	if r := e.st.Running; r != nil && r.Iteration == w.Iteration && e.iter.info.N == w.Iteration {
		return nil
	}
	hat := e.hat(w.Hat)
	backend := e.pick(hat.ID)
	if r := e.st.Running; r == nil || r.Iteration != w.Iteration {
		if err := e.append(runfiles.RalphEvent(runfiles.TopicIterationStarted, runfiles.IterationStartedRecord{
			Iteration: w.Iteration, Hat: w.Hat, Events: w.Events, Backend: backend.Name(), Sandbox: sandboxOf(backend),
			DisallowedTools: deniedOf(backend)})); err != nil {
			return err
		}
	}
	e.iter = e.waveIteration(hat, w.Iteration, w.Events, backend)
	e.opts.Reporter.IterationStarted(e.iter.info)
	e.reportWave()
	return e.saveAs(runfiles.PhaseWave)
}

// runWorkers runs the workers pending, in index order, at most the hat's
// concurrency at once, and records each as it ends.
func (e *Engine) runWorkers(ctx context.Context, w *runfiles.WaveState, pending []int) error {
	waveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopped atomic.Bool
	stopNow := e.stop.OnNow(func() { stopped.Store(true); cancel() })
	defer stopNow()
	limitCtx, stopForLimit := context.WithCancelCause(waveCtx)
	defer stopForLimit(nil)
	stopRuntime := e.watchRuntime(stopForLimit)
	defer stopRuntime()
	e.checkBudget(stopForLimit) // a resume may find a limit reached already
	runCtx := limitCtx
	if d := w.Deadline(); !d.IsZero() {
		var cancelDeadline context.CancelFunc
		runCtx, cancelDeadline = context.WithDeadline(limitCtx, d)
		defer cancelDeadline()
	}
	evs, err := e.waveEvents(w)
	if err != nil {
		return err
	}
	e.clearStaleCommitLocks()
	it := &e.iter
	it.before = e.snapshot(ctx)
	done := make(chan workerResult)
	// queue is the workers to start, in order: those pending, then those
	// a provider's failure moved to another backend of the hat's chain.
	queue := slices.Clone(pending)
	next, running := 0, 0
	var fatal error
	for left := len(queue); left > 0; {
		switch {
		case next < len(queue) && runCtx.Err() == nil && running < max(w.Concurrency, 1) && fatal == nil:
			i, b := queue[next], e.pick(w.Hat)
			next++
			running++
			go func() { done <- e.runWorker(runCtx, w, i, evs[i], b) }()
			continue
		case next < len(queue) && running == 0:
			// The wave's time is up (or it is cut off) before these
			// could start.
			for _, i := range queue[next:] {
				if err := e.recordWorker(w, e.unstarted(ctx, runCtx, w, i, stopped.Load(), fatal), &fatal); err != nil {
					return err
				}
			}
			left -= len(queue) - next
			next = len(queue)
			continue
		}
		r := <-done
		running--
		if runCtx.Err() == nil {
			if moved, err := e.moveWorker(w, r); err != nil {
				return err
			} else if moved {
				queue = append(queue, r.rec.Index)
				e.checkBudget(stopForLimit) // what the moved attempt spent counts
				continue
			}
		}
		left--
		if err := e.recordWorker(w, r, &fatal); err != nil {
			return err
		}
		if fatal != nil {
			cancel()
		}
		e.checkBudget(stopForLimit)
	}
	switch {
	case fatal != nil:
		e.ending, e.fatal = e.terminate(runfiles.ReasonFatal, fatal.Error()), fatal
	case ctx.Err() != nil:
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal, "interrupted by a signal while the wave of hat "+w.Hat+" was running")
	case stopped.Load():
		e.ending = e.terminateBy(runfiles.ReasonStopped, runfiles.CauseStopNow, "a stop --now request interrupted the running wave")
	}
	return nil
}

// unstarted is the result of a worker that never started: stopped by the
// run's limit, missed when the wave's deadline passed, cut off otherwise.
func (e *Engine) unstarted(ctx, runCtx context.Context, w *runfiles.WaveState, i int, stoppedNow bool, fatal error) workerResult {
	if ctx.Err() != nil || stoppedNow || fatal != nil {
		return workerResult{cut: true}
	}
	rec := runfiles.WaveWorkerRecord{WaveID: w.WaveID, Iteration: w.Iteration, Hat: w.Hat, Index: i}
	if l := limitOf(runCtx); l != nil {
		rec.Outcome, rec.Limit, rec.Message = runfiles.OutcomeInterrupted, l.reason, "not started: "+l.msg
		return workerResult{rec: rec}
	}
	rec.Outcome, rec.Failure, rec.Missed = runfiles.OutcomeFailure, events.FailureTimeout, true
	rec.Message = fmt.Sprintf("not started: the wave's timeout (%s) passed first", time.Duration(w.DeadlineMS)*time.Millisecond)
	return workerResult{rec: rec}
}

// A limit on what the run spends (max_runtime_seconds, max_cost_usd,
// max_tokens) is checked between iterations, but a wave is one iteration
// of many agents, each adding to the totals as it ends: left alone, a
// wave would spend past the limit by up to its whole size. So the wave
// checks them itself, and once one is reached, its running workers are
// stopped as the wave's timeout stops them and those not started are not
// run. The wave is merged with what arrived, and the check that follows
// its iteration ends the run on the limit, as after any iteration.

// limitStop is the cause a wave's workers are stopped for: the run reached
// one of its limits.
type limitStop struct {
	reason runfiles.Reason
	msg    string
}

func (l *limitStop) Error() string { return l.msg }

// limitOf is the limit ctx was ended for, nil if none.
func limitOf(ctx context.Context) *limitStop {
	l, _ := errors.AsType[*limitStop](context.Cause(ctx))
	return l
}

// checkBudget stops the wave when the run has reached a limit on what it
// spends.
func (e *Engine) checkBudget(stop context.CancelCauseFunc) {
	if t := e.budgetReached(); t != nil {
		stop(&limitStop{reason: t.Reason, msg: t.Message})
	}
}

// watchRuntime stops the wave when the run's max_runtime_seconds passes,
// which no worker's end announces.
func (e *Engine) watchRuntime(stop context.CancelCauseFunc) (cancel func()) {
	limit := e.opts.Settings.MaxRuntime
	if limit <= 0 {
		return func() {}
	}
	l := &limitStop{reason: runfiles.ReasonMaxRuntime, msg: fmt.Sprintf("reached max_runtime_seconds (%s)", limit)}
	t := time.AfterFunc(max(limit-e.st.Runtime(e.now()), 0), func() { stop(l) })
	return func() { t.Stop() }
}

// recordWorker appends wave.worker_finished for a worker that ended, and
// keeps the first error that must end the run.
func (e *Engine) recordWorker(w *runfiles.WaveState, r workerResult, fatal *error) error {
	if r.err != nil {
		if *fatal == nil {
			*fatal = r.err
		}
		return nil
	}
	if r.cut {
		return nil
	}
	if err := e.append(runfiles.RalphEvent(runfiles.TopicWaveWorkerFinished, r.rec)); err != nil {
		return err
	}
	e.fault(FaultWaveWorkerFinished)
	e.reportWave()
	if r.rec.Failed() {
		e.opts.Reporter.Warn(fmt.Sprintf("wave %s: worker %d of %d failed: %s", w.WaveID, r.rec.Index+1, w.Total, r.rec.Message))
	}
	return nil
}

// waveEvents are the wave's events, by worker index, from the pending
// events the fold keeps (they stay pending until the wave's iteration
// finishes).
func (e *Engine) waveEvents(w *runfiles.WaveState) ([]events.Event, error) {
	out := make([]events.Event, len(w.Events))
	for i, off := range w.Events {
		j := slices.IndexFunc(e.st.Pending, func(p runfiles.PendingEvent) bool { return p.Offset == off })
		if j < 0 {
			return nil, fmt.Errorf("wave %s: its event at offset %d is no longer pending", w.WaveID, off)
		}
		out[i] = e.st.Pending[j].Event
	}
	return out, nil
}

// moveWorker moves a worker whose agent hit a far rate limit, or failed
// for the provider's sake, to the next backend of the hat's chain that is
// available, as a plain iteration moves (switchFor): it appends the
// attempt's wave.worker_finished marked moved, which counts what it used
// without finishing the worker, and backend.switched, which makes the
// backend it ran on unavailable, and
// the worker is run again, on the backend the chain picks, in files of a
// new attempt. With no chain, or no backend of it available, the worker
// fails as before: a wave does not wait for a reset.
func (e *Engine) moveWorker(w *runfiles.WaveState, r workerResult) (bool, error) {
	if r.err != nil || r.cut || !r.rec.Failed() || r.rec.Missed || r.rec.Stopped() {
		return false, nil
	}
	sw := e.switchReason(w.Hat, w.Iteration, r.rec.Backend, r.res, r.runErr)
	if sw == nil {
		return false, nil
	}
	next := e.nextAfter(w.Hat, r.rec.Backend)
	if next == nil {
		return false, nil
	}
	sw.To = next.Name()
	// The attempt's tokens and cost count as a failed iteration's do.
	moved := r.rec
	moved.Moved = true
	if err := e.append(runfiles.RalphEvent(runfiles.TopicWaveWorkerFinished, moved), runfiles.RalphEvent(runfiles.TopicBackendSwitched, *sw)); err != nil {
		return false, err
	}
	e.reportSwitch(*sw)
	e.opts.Reporter.Warn(fmt.Sprintf("wave %s: worker %d of %d moves from %s to %s: %s", w.WaveID, r.rec.Index+1, w.Total, sw.From, sw.To, r.rec.Message))
	return true, nil
}

// runWorker runs worker i of the wave on its event, on backend b.
func (e *Engine) runWorker(ctx context.Context, w *runfiles.WaveState, i int, ev events.Event, b Backend) workerResult {
	info := e.iter.info
	rec := runfiles.WaveWorkerRecord{WaveID: w.WaveID, Iteration: w.Iteration, Hat: w.Hat, Index: i, Backend: b.Name()}
	files, err := e.openWorker(w, i)
	if err != nil {
		return workerResult{err: err}
	}
	defer files.raw.Close()
	prompt := hats.BuildPrompt(e.workerPrompt(info.Hat, w, i, ev))
	if err := e.writeNew(files.prompt, []byte(e.opts.Redactor.String(prompt))); err != nil {
		return workerResult{err: storageError(OpPrompt, files.prompt, err)}
	}
	run := events.AgentRun{
		Prompt:      prompt,
		Dir:         e.opts.Workspace,
		Env:         e.workerEnv(w, i, files.events),
		RawOutput:   files.raw,
		Timeout:     time.Duration(w.WorkerTimeoutMS) * time.Millisecond,
		IdleTimeout: e.opts.Settings.IdleTimeout,
		ForceKill:   e.opts.ForceKill,
		// Recorded, so that a ralph killed mid-wave is followed by one
		// that stops the workers it left (orphan_unix.go).
		Started: func(pid int) { e.recordAgentAt(e.files().WaveAgentPID(i), pid) },
	}
	defer func() { _ = ralphdir.Truncate(e.dir, e.files().WaveAgentPID(i)) }()
	res, err := b.Run(ctx, run, func(a events.Activity) {
		e.reportMu.Lock()
		defer e.reportMu.Unlock()
		e.opts.Reporter.Activity(info, a)
	})
	if rawErr := files.raw.Close(); rawErr != nil {
		return workerResult{err: rawErr}
	}
	cost := priceIteration(e.opts.Prices, res, b)
	rec.Attempt, rec.EventsFile = files.attempt, e.workspaceRelPath(files.events)
	rec.ExitCode, rec.DurationMS, rec.Usage = res.ExitCode, res.Duration.Milliseconds(), res.Usage
	rec.CostUSD, rec.CostSource, rec.Model = cost.USD, cost.Source, cost.Model
	switch l := limitOf(ctx); {
	case err != nil && l != nil:
		rec.Outcome, rec.Limit, rec.Message = runfiles.OutcomeInterrupted, l.reason, "stopped: "+l.msg
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		rec.Outcome, rec.Failure, rec.Missed = runfiles.OutcomeFailure, events.FailureTimeout, true
		rec.Message = fmt.Sprintf("stopped: the wave's timeout (%s) passed", time.Duration(w.DeadlineMS)*time.Millisecond)
	case err != nil && ctx.Err() != nil:
		return workerResult{cut: true}
	case err != nil:
		rec.Outcome, rec.Message = runfiles.OutcomeFailure, err.Error()
	case res.Failed() || res.Failure == events.FailureRateLimit:
		// A plain iteration waits out a rate limit and runs again; a
		// worker has no result to show for it, unless moveWorker moves it.
		rec.Outcome, rec.Failure, rec.Message = runfiles.OutcomeFailure, res.Failure, cmp.Or(res.FailureMessage, "the agent failed")
	default:
		rec.Outcome = runfiles.OutcomeSuccess
	}
	if !rec.Missed && !rec.Stopped() {
		if err := e.appendWorkerTags(files.events, w, i, res.FinalText); err != nil {
			return workerResult{err: storageError(OpAppendLog, files.events, err)}
		}
	}
	size, err := fileSize(e.dir, files.events)
	if err != nil {
		return workerResult{err: storageError(OpAppendLog, files.events, err)}
	}
	rec.EventsBytes = size
	return workerResult{rec: rec, res: res, runErr: err}
}

// workerFiles are one attempt of a worker's files under the run's
// directory: its events file, raw output and prompt.
type workerFiles struct {
	events, prompt string
	raw            *rawOutput
	attempt        int
}

// waveDir is where a wave's iteration keeps its workers' files, in the
// run's directory.
func waveDir(n int) string { return fmt.Sprintf("wave-%04d", n) }

// openWorker makes the files of a new attempt of worker i: a worker run
// again after a crash gets files of its own, so nothing the cut-off one
// wrote (or still writes, orphaned) is taken for its result.
func (e *Engine) openWorker(w *runfiles.WaveState, i int) (workerFiles, error) {
	dir := filepath.Join(e.files().Run(e.st.RunID), waveDir(w.Iteration))
	if err := ralphdir.MkdirAll(e.dir, dir); err != nil {
		return workerFiles{}, storageError(OpRawOutput, dir, err)
	}
	for attempt := 1; ; attempt++ {
		base := filepath.Join(dir, fmt.Sprintf("worker-%02d-a%d", i+1, attempt))
		f, err := ralphdir.OpenFile(e.dir, base+".events.jsonl", os.O_WRONLY|os.O_CREATE|os.O_EXCL, ralphdir.FileMode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return workerFiles{}, storageError(OpAppendLog, base+".events.jsonl", err)
		}
		_ = f.Close()
		raw, err := ralphdir.OpenFile(e.dir, base+".jsonl", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, ralphdir.FileMode)
		if err != nil {
			return workerFiles{}, storageError(OpRawOutput, base+".jsonl", err)
		}
		stop := func() {} // a failed write is returned by Close, and ends the run
		return workerFiles{events: base + ".events.jsonl", prompt: base + ".prompt.md", attempt: attempt,
			raw: &rawOutput{f: raw, stop: stop, fault: func() error { return e.writeFault(FileRawOutput) }}}, nil
	}
}

// workerPrompt is the prompt of worker i: the objective, its one event,
// the hat's instructions and the rules of a wave.
func (e *Engine) workerPrompt(h hats.Hat, w *runfiles.WaveState, i int, ev events.Event) hats.PromptInput {
	in := e.promptInput(h, []events.Event{ev}, []int64{w.Events[i]}, w.Iteration)
	in.LastIteration = "" // the previous iteration's news is the hat's, not one worker's
	in.Worker = &hats.Worker{WaveID: w.WaveID, Index: i, Total: w.Total}
	in.WaveRoutes = nil
	return in
}

// workerEnv is the agent's environment, with the worker's own events file
// and what tells it it is a worker (`ralph wave emit` refuses there).
func (e *Engine) workerEnv(w *runfiles.WaveState, i int, eventsFile string) []string {
	env := slices.DeleteFunc(e.agentEnv(), func(kv string) bool { return strings.HasPrefix(kv, "RALPH_EVENTS_FILE=") })
	abs := eventsFile
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(e.opts.Workspace, abs)
	}
	return append(env,
		"RALPH_EVENTS_FILE="+abs,
		"RALPH_WAVE_WORKER=1",
		"RALPH_WAVE_ID="+w.WaveID,
		"RALPH_WAVE_INDEX="+strconv.Itoa(i),
		"RALPH_WAVE_TOTAL="+strconv.Itoa(w.Total),
	)
}

// appendWorkerTags appends to the worker's events file the <event> tags
// of its final text that repeat no event it wrote with `ralph emit`.
func (e *Engine) appendWorkerTags(path string, w *runfiles.WaveState, i int, text string) error {
	tags := events.ParseTags(text)
	if len(tags) == 0 {
		return nil
	}
	emitted, err := e.readWorkerLines(path, -1)
	if err != nil {
		return err
	}
	var add []events.Event
	for _, tag := range tags {
		if slices.ContainsFunc(emitted, func(ev events.Event) bool {
			return ev.Topic == tag.Topic && strings.TrimSpace(ev.PayloadText()) == strings.TrimSpace(tag.Payload)
		}) {
			continue
		}
		add = append(add, events.Event{Topic: tag.Topic, Payload: events.StringPayload(tag.Payload), Iteration: w.Iteration,
			Hat: w.Hat, Source: events.SourceTag, Target: tag.Target})
	}
	if len(add) == 0 {
		return nil
	}
	f, err := ralphdir.OpenFile(e.dir, path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	var buf []byte
	for _, ev := range add {
		ev.TS = e.now().UTC()
		line, err := events.EncodeLine(ev)
		if err != nil {
			continue
		}
		buf = append(buf, line...)
	}
	_, err = f.Write(buf)
	return errors.Join(err, f.Close())
}

// readWorkerLines reads the events of a worker's file, its first limit
// bytes (all of it for a negative limit). The file is opened as every
// file under .ralph/ is, never through a link; a line that is not an
// event is left out (the count is returned in bad).
func (e *Engine) readWorkerLines(path string, limit int64) ([]events.Event, error) {
	evs, _, err := e.readWorkerLinesCounted(path, limit)
	return evs, err
}

func (e *Engine) readWorkerLinesCounted(path string, limit int64) (evs []events.Event, bad int, err error) {
	f, err := ralphdir.OpenFile(e.dir, path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit)
	}
	err = events.Scan(r, func(rec events.Record) error {
		if rec.Err != nil {
			bad++
			return nil
		}
		evs = append(evs, rec.Event)
		return nil
	})
	return evs, bad, err
}

func fileSize(root, path string) (int64, error) {
	f, err := ralphdir.OpenFile(root, path, os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// workspaceRelPath is path, under the workspace, relative to it.
func (e *Engine) workspaceRelPath(path string) string {
	rel, err := filepath.Rel(e.opts.Workspace, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// cutWave records the wave's iteration as interrupted: the run ends, and
// a resume runs the workers without a result.
func (e *Engine) cutWave(w *runfiles.WaveState) (runfiles.Phase, error) {
	if err := e.append(runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{
		Iteration: w.Iteration, Hat: w.Hat, Outcome: runfiles.OutcomeInterrupted, WaveID: w.WaveID,
		Message: "ralph stopped while the wave's workers were running"})); err != nil {
		return "", err
	}
	return runfiles.PhaseTerminating, e.saveAs(runfiles.PhaseTerminating)
}

// mergeWave writes the workers' lines into the log, in worker order, then
// wave.finished and iteration.finished, in one write. Lines the fold
// counts as merged already (a merge a crash cut short) are not written
// again.
func (e *Engine) mergeWave(ctx context.Context, w *runfiles.WaveState) (runfiles.Phase, error) {
	fin := runfiles.WaveFinishedRecord{WaveID: w.WaveID, Iteration: w.Iteration, Hat: w.Hat, Total: w.Total, Succeeded: []int{}}
	var lines []events.Event
	var res events.AgentResult
	cost := runfiles.IterationCost{Source: runfiles.CostReported}
	for i := range w.Total {
		r := w.Done[i]
		switch {
		case r.Stopped():
			fin.Stopped, fin.Limit = append(fin.Stopped, i), r.Limit
		case r.Missed:
			fin.Missed = append(fin.Missed, i)
		case r.Failed():
			fin.Failed = append(fin.Failed, i)
		default:
			fin.Succeeded = append(fin.Succeeded, i)
		}
		res.Usage = res.Usage.Add(r.Usage)
		cost.USD += r.CostUSD
		cost.Source = worseSource(cost.Source, r.CostSource)
		res.Duration = max(res.Duration, time.Duration(r.DurationMS)*time.Millisecond)
		worker, err := e.workerLines(w, i, r)
		if err != nil {
			return "", err
		}
		lines = append(lines, worker...)
		fin.Lines += len(worker) + w.Merged[i]
	}
	for _, r := range w.Moved {
		res.Usage = res.Usage.Add(r.Usage)
		cost.USD += r.CostUSD
		cost.Source = worseSource(cost.Source, r.CostSource)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	it := &e.iter
	after := e.snapshot(rctx)
	commits := e.commitEvents(rctx, it.before, after)
	lines = append(lines, commits...)
	outcome := runfiles.WaveOutcome(fin)
	lines = append(lines, runfiles.RalphEvent(runfiles.TopicWaveFinished, fin),
		runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{
			Iteration: w.Iteration, Hat: w.Hat, Outcome: outcome, WaveID: w.WaveID, Message: fin.MissingText(),
			DurationMS: e.now().Sub(w.StartedAt).Milliseconds(), Usage: res.Usage, CostUSD: cost.USD, CostSource: cost.Source,
			Commits: len(commits), Changed: it.before.Fingerprint != after.Fingerprint}))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	e.lastSnapshot = &after
	info := it.info
	info.Outcome, info.Cost = outcome, cost
	res.CostUSD = cost.USD
	if outcome != runfiles.OutcomeSuccess {
		res.FailureMessage = fin.MissingText()
	}
	e.opts.Reporter.IterationFinished(info, res)
	if e.ending != nil {
		return runfiles.PhaseTerminating, e.saveAs(runfiles.PhaseTerminating)
	}
	return runfiles.PhaseSettling, nil
}

// workerLines are worker i's lines still to merge: its events file up to
// the size its wave.worker_finished recorded, less those merged already,
// each placed in the wave and given to the wave's hat and iteration.
func (e *Engine) workerLines(w *runfiles.WaveState, i int, r runfiles.WaveWorkerRecord) ([]events.Event, error) {
	if r.EventsFile == "" {
		return nil, nil
	}
	path := filepath.Join(e.opts.Workspace, filepath.FromSlash(r.EventsFile))
	evs, bad, err := e.readWorkerLinesCounted(path, r.EventsBytes)
	if errors.Is(err, os.ErrNotExist) {
		e.opts.Reporter.Warn(fmt.Sprintf("wave %s: the events file of worker %d (%s) is gone; its events are lost", w.WaveID, i+1, r.EventsFile))
		return nil, nil
	}
	if _, isLink := errors.AsType[*ralphdir.LinkError](err); isLink {
		e.opts.Reporter.Warn(fmt.Sprintf("wave %s: the events file of worker %d is left out: %v", w.WaveID, i+1, err))
		return nil, nil
	}
	if err != nil {
		return nil, storageError(OpAppendLog, path, err)
	}
	if bad > 0 {
		e.opts.Reporter.Warn(fmt.Sprintf("wave %s: worker %d wrote %d lines that are not events; they were left out", w.WaveID, i+1, bad))
	}
	evs = evs[min(w.Merged[i], len(evs)):]
	for j := range evs {
		evs[j].Iteration, evs[j].Hat = w.Iteration, w.Hat
		evs[j].Wave = &events.Wave{WaveID: w.WaveID, WaveIndex: i, WaveTotal: w.Total}
		if evs[j].Source != events.SourceTag {
			evs[j].Source = events.SourceAgent
		}
	}
	return evs, nil
}

// worseSource is the cost source of a sum: unknown if any part is, else
// computed if any part is.
func worseSource(a, b runfiles.CostSource) runfiles.CostSource {
	switch {
	case a == runfiles.CostUnknown || b == runfiles.CostUnknown:
		return runfiles.CostUnknown
	case a == runfiles.CostComputed || b == runfiles.CostComputed:
		return runfiles.CostComputed
	}
	return cmp.Or(a, b)
}

// withMissingWorkers adds to the news of the last iteration, for the hat
// that collects a wave, which workers of the wave have no result, when
// the wave's results are among its events: it may run later than the
// iteration right after the wave.
func (e *Engine) withMissingWorkers(h hats.Hat, evs []events.Event, note string) string {
	last := e.st.LastWave
	if h.Aggregate == nil || last == nil || !slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.InWave() && ev.WaveID == last.WaveID }) {
		return note
	}
	missing := last.MissingText()
	if missing == "" || strings.Contains(note, missing) {
		return note
	}
	return strings.TrimSpace(note + "\n" + missing)
}

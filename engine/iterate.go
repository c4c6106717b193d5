package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine/memory"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/plural"
)

// selecting chooses the hat, builds its prompt and records the start of the
// iteration.
func (e *Engine) selecting() (Phase, error) {
	hat, offsets, evs := e.choose()
	confirming := e.st.Confirming != nil
	if !confirming && e.exhausted(hat) {
		return e.dropExhausted(hat, offsets)
	}
	n := e.st.Iteration + 1
	backend := e.backendFor(hat.ID)
	prompt := hats.BuildPrompt(e.promptInput(hat, evs, n))
	if err := e.append(ralphEvent(TopicIterationStarted, iterationStartedRecord{
		Iteration: n, Hat: hat.ID, Events: offsets, Confirming: confirming, Backend: backend.Name()})); err != nil {
		return "", err
	}
	e.iter = IterationInfo{N: n, Max: e.opts.Settings.MaxIterations, Hat: hat, Backend: backend.Name(),
		Confirming: confirming, Prompt: prompt, Started: e.now()}
	e.iterEvents = offsets
	if err := e.saveAs(PhaseRunning); err != nil {
		return "", err
	}
	e.opts.Reporter.IterationStarted(e.iter)
	return PhaseRunning, nil
}

// choose picks the hat for the pending events. A confirmation iteration is
// the coordinator's, with no events: it judges the claim afresh.
func (e *Engine) choose() (hats.Hat, []int64, []events.Event) {
	if e.st.Confirming != nil {
		return e.hat(hats.CoordinatorID), []int64{}, nil
	}
	all := make([]events.Event, len(e.st.Pending))
	for i, p := range e.st.Pending {
		all[i] = p.Event
	}
	hat := e.opts.Hats.Choose(all).Hat
	offsets, evs := []int64{}, []events.Event{}
	for _, p := range e.st.Pending {
		if routesTo(p, hat.ID) {
			offsets = append(offsets, p.Offset)
			evs = append(evs, p.Event)
		}
	}
	return hat, offsets, evs
}

// routesTo reports whether hatID owns the pending event: its first
// receiver, or the coordinator when nobody receives it. Each event is
// handled by one hat, as hats.Registry.Choose decides.
func routesTo(p PendingEvent, hatID string) bool {
	if len(p.To) == 0 {
		return hatID == hats.CoordinatorID
	}
	return p.To[0] == hatID
}

func (e *Engine) exhausted(h hats.Hat) bool {
	return h.MaxActivations > 0 && e.st.Activations[h.ID] >= h.MaxActivations
}

// dropExhausted drops the events of a hat that has used up its activations
// and publishes <hat>.exhausted the first time.
func (e *Engine) dropExhausted(h hats.Hat, offsets []int64) (Phase, error) {
	lines := []events.Event{ralphEvent(TopicEventDropped, droppedRecord{Offsets: offsets, Hat: h.ID, Reason: "exhausted"})}
	if !slices.Contains(e.st.Exhausted, h.ID) {
		lines = append(lines, ralphEvent(h.ID+suffixExhausted, fmt.Sprintf(
			"Hat %s reached max_activations (%d); its pending events were dropped.", h.ID, h.MaxActivations)))
	}
	e.opts.Reporter.Warn(fmt.Sprintf("hat %s reached max_activations (%d); dropped %s", h.ID, h.MaxActivations,
		plural.Count(len(offsets), "pending event", "pending events")))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	return PhaseSettling, e.saveAs(PhaseSettling)
}

func (e *Engine) promptInput(h hats.Hat, evs []events.Event, n int) hats.PromptInput {
	in := hats.PromptInput{
		Objective:       e.objective(),
		Hat:             h,
		Events:          evs,
		Routes:          e.opts.Hats.Routes(h),
		CompletionTopic: e.opts.Settings.CompletionTopic,
		EmitCommand:     e.opts.RalphBin,
		Iteration:       n,
		LastIteration:   e.st.LastNote,
		Scratchpad:      e.scratchpad(),
		Memories:        e.memories(h, evs),
	}
	if e.st.Confirming != nil {
		in.Confirming, in.Claim = true, *e.st.Confirming
	}
	return in
}

func (e *Engine) objective() string {
	if e.st != nil && e.st.Objective != "" {
		return e.st.Objective
	}
	return e.opts.Objective
}

// source is where the run's objective came from: as recorded when it
// started, since a resume keeps that objective whatever its flags say.
func (e *Engine) source() string {
	if e.st != nil && e.st.Source != "" {
		return e.st.Source
	}
	return e.opts.Source
}

// memories picks the long-term memories most relevant to this iteration's
// objective, hat and events, within the configured budget.
func (e *Engine) memories(h hats.Hat, evs []events.Event) string {
	budget := e.opts.Settings.MemoriesBudget
	if budget <= 0 {
		return ""
	}
	ms, err := memory.Store{Path: filepath.Join(e.dir, "agent", "memories.md")}.List()
	if err != nil {
		e.opts.Reporter.Warn("cannot read memories: " + err.Error())
		return ""
	}
	query := []string{e.objective(), h.Name, h.Instructions}
	for _, ev := range evs {
		query = append(query, ev.Topic, ev.PayloadText())
	}
	return memory.Select(ms, strings.Join(query, " "), budget)
}

// scratchpadLimit bounds the scratchpad injected into a prompt; the newest
// part is kept because that is what the agent wrote last.
const scratchpadLimit = 16 * 1024

// ScratchpadFile is the name of the agent's working notes, under .ralph/agent/
// during a run and under .ralph/runs/<id>/ once the next run started.
const ScratchpadFile = "scratchpad.md"

func (e *Engine) scratchpadPath() string { return filepath.Join(e.dir, "agent", ScratchpadFile) }

func (e *Engine) scratchpad() string {
	data, err := os.ReadFile(e.scratchpadPath())
	if err != nil || len(data) == 0 {
		return ""
	}
	if len(data) <= scratchpadLimit {
		return string(data)
	}
	cut := len(data) - scratchpadLimit
	return fmt.Sprintf("[the first %d bytes are cut; the whole file is .ralph/agent/scratchpad.md]\n%s", cut, data[cut:])
}

// running runs the agent for the iteration.
func (e *Engine) running(ctx context.Context) (Phase, error) {
	iterCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopNow := e.stop.OnNow(cancel)
	defer stopNow()

	raw, err := e.openRawOutput(cancel)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	run := events.AgentRun{
		Prompt:      e.iter.Prompt,
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
	it := e.iter
	e.head = e.repoHead(ctx)
	e.fingerprint = e.repoFingerprint(ctx)
	e.specBefore = e.specItems()
	res, err := e.backendFor(it.Hat.ID).Run(iterCtx, run, func(a events.Activity) {
		e.opts.Reporter.Activity(it, a)
	})
	rawErr := raw.Close()
	e.result, e.interrupted = res, false
	switch {
	case rawErr != nil:
		e.interrupted = true
		e.ending = e.terminate(ReasonFatal, rawErr.Error())
		e.fatal = rawErr
	case err == nil && res.Failure == events.FailureAuth:
		e.ending = e.terminate(ReasonFatal, res.FailureMessage)
		e.fatal = &AgentAuthError{Backend: e.iter.Backend, Message: res.FailureMessage}
	case err == nil:
	case ctx.Err() != nil:
		e.interrupted = true
		e.ending = e.terminate(ReasonInterrupted, "interrupted by a signal while hat "+it.Hat.ID+" was running")
	case iterCtx.Err() != nil:
		e.interrupted = true
		e.ending = e.terminate(ReasonStopped, "`ralph stop --now` interrupted the running iteration")
	default:
		e.interrupted = true
		e.ending = e.terminate(ReasonFatal, err.Error())
		e.fatal = err
	}
	return PhaseCollecting, nil
}

func (e *Engine) agentEnv() []string {
	abs := filepath.Join(e.opts.Workspace, e.st.EventsFile)
	env := append([]string{}, e.opts.AgentEnv...)
	return append(env,
		"RALPH_EVENTS_FILE="+abs,
		"RALPH_ITERATION="+strconv.Itoa(e.iter.N),
		"RALPH_HAT="+e.iter.Hat.ID,
		"RALPH_RUN_ID="+e.st.RunID,
		"RALPH_BIN="+e.opts.RalphBin,
		"RALPH_WORKSPACE="+e.opts.Workspace,
	)
}

// openRawOutput creates runs/<run-id>/iter-NNNN.jsonl for the agent's raw
// output. A repeated iteration (after an interruption or a rate limit) gets
// its own file, so no attempt's output is lost. stop stops the agent.
func (e *Engine) openRawOutput(stop func()) (*rawOutput, error) {
	dir := filepath.Join(e.dir, RunsDir, e.st.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, storageError(OpRawOutput, dir, err)
	}
	base := fmt.Sprintf("iter-%04d", e.iter.N)
	for attempt := 1; ; attempt++ {
		name := base + ".jsonl"
		if attempt > 1 {
			name = fmt.Sprintf("%s.attempt%d.jsonl", base, attempt)
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

// collecting records what the agent did: the events it wrote as tags in
// its final text, then iteration.finished, in one write.
func (e *Engine) collecting() (Phase, error) {
	res, it := e.result, e.iter
	outcome := e.outcome()
	var lines []events.Event
	if outcome == OutcomeSuccess || outcome == OutcomeFailure {
		if err := e.fold(); err != nil {
			return "", err
		}
		lines = append(lines, e.tagEvents(res.FinalText)...)
	}
	if outcome == OutcomeRateLimited {
		lines = append(lines, ralphEvent(TopicRateLimited, e.rateLimitRecord()))
	}
	commits := e.commitEvents()
	lines = append(lines, commits...)
	tasks := e.taskEvents()
	lines = append(lines, tasks...)
	lines = append(lines, ralphEvent(TopicIterationFinished, iterationFinishedRecord{
		Iteration: it.N, Hat: it.Hat.ID, Outcome: outcome, ExitCode: res.ExitCode,
		Failure: res.Failure, Message: res.FailureMessage, DurationMS: res.Duration.Milliseconds(),
		Usage: res.Usage, CostUSD: res.CostUSD, Tools: res.Tools, Confirming: it.Confirming,
		Said: tail(res.FinalText, saidLimit), Commits: len(commits), TasksDone: len(tasks),
		Changed: e.fingerprint != e.repoFingerprint(context.Background()),
	}))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	it.Outcome = outcome
	e.opts.Reporter.IterationFinished(it, res)
	switch {
	case e.ending != nil:
		return PhaseTerminating, e.saveAs(PhaseTerminating)
	case outcome == OutcomeRateLimited:
		return PhaseWaiting, e.saveAs(PhaseWaiting)
	}
	e.rateWaits = 0
	return PhaseSettling, e.saveAs(PhaseSettling)
}

func (e *Engine) outcome() Outcome {
	switch {
	case e.interrupted:
		return OutcomeInterrupted
	case e.result.Failure == events.FailureRateLimit:
		return OutcomeRateLimited
	case e.result.Failed():
		return OutcomeFailure
	}
	return OutcomeSuccess
}

// tagEvents turns the <event> tags of the agent's final text into events.
// A tag that repeats an event the agent already wrote with `ralph emit`
// (same topic and payload) is the fallback the prompt asked for, not a
// second event.
func (e *Engine) tagEvents(text string) []events.Event {
	var out []events.Event
	for _, tag := range events.ParseTags(text) {
		if e.emitted(tag) {
			continue
		}
		out = append(out, events.Event{Topic: tag.Topic, Payload: events.StringPayload(tag.Payload),
			Iteration: e.iter.N, Hat: e.iter.Hat.ID, Source: events.SourceTag, Target: tag.Target})
	}
	return out
}

func (e *Engine) emitted(tag events.Tag) bool {
	for _, u := range e.st.Undecided {
		if u.Event.Iteration == e.iter.N && u.Event.Topic == tag.Topic &&
			strings.TrimSpace(u.Event.PayloadText()) == strings.TrimSpace(tag.Payload) {
			return true
		}
	}
	return false
}

// rateLimitBackoff is the first wait when the provider gives no reset time;
// it doubles with each limit in a row.
const rateLimitBackoff = 30 * time.Second

func (e *Engine) rateLimitWait() time.Duration {
	maxWait := e.opts.Settings.RateLimitMaxWait
	if maxWait <= 0 {
		maxWait = time.Hour
	}
	var wait time.Duration
	if reset := e.result.RateLimitResetAt; !reset.IsZero() {
		wait = reset.Sub(e.now()) + time.Second
	} else {
		wait = rateLimitBackoff << min(e.rateWaits, 10)
	}
	return max(min(wait, maxWait), time.Second)
}

func (e *Engine) rateLimitRecord() rateLimitedRecord {
	r := rateLimitedRecord{Iteration: e.iter.N, Hat: e.iter.Hat.ID, Message: e.result.FailureMessage,
		WaitMS: e.rateLimitWait().Milliseconds()}
	if !e.result.RateLimitResetAt.IsZero() {
		r.ResetAt = e.result.RateLimitResetAt.UTC().Format(time.RFC3339)
	}
	return r
}

// waiting sleeps until the rate limit lifts, then repeats the iteration.
func (e *Engine) waiting(ctx context.Context) (Phase, error) {
	wait := e.rateLimitWait()
	e.rateWaits++
	e.opts.Reporter.RateLimited(e.iter, wait)
	if err := sleep(ctx, wait); err != nil {
		e.ending = e.terminate(ReasonInterrupted, "interrupted while waiting for a rate limit to lift")
		return PhaseTerminating, nil
	}
	// The wait is over even if the clock says a moment is left.
	e.st.RateLimitedUntil = time.Time{}
	return PhaseChecking, nil
}

// terminating records the end of the run.
func (e *Engine) terminating() (Phase, error) {
	t := e.ending
	if t == nil {
		t = e.terminate(ReasonFatal, "the loop ended without a reason")
	}
	st := e.st
	if err := e.append(ralphEvent(TopicLoopTerminate, terminateRecord{
		Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message, Iterations: st.Iteration,
		CostUSD: st.CostUSD, Tokens: st.Usage.Total(), RuntimeMS: st.Runtime(e.now()).Milliseconds(),
	})); err != nil {
		return "", err
	}
	if err := e.saveAs(PhaseDone); err != nil {
		return "", err
	}
	if sr, ok := e.opts.Reporter.(StuckReporter); ok && t.Reason == ReasonStuck {
		sr.Stuck(t.Message, st.NoProgress)
	}
	sum := e.summary()
	e.writeSummary(sum)
	e.opts.Reporter.LoopFinished(sum)
	return PhaseDone, nil
}

// saidLimit bounds how much of an agent's final message is kept for the
// next prompt: enough for a verdict and its reasons.
const saidLimit = 1500

// tail returns the last n bytes of s, starting at a line when it can.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := s[len(s)-n:]
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		cut = cut[i+1:]
	}
	return "…" + cut
}

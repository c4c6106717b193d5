package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/internal/linelog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// WorkerJob is one task's loop, as a worker starts it. It is not
// autopilot.Job: a worker's loop gets the task's config files as they came
// over the wire (no overlay of the coordinator's), starts from a checkout
// that may continue another worker's work, and is marked so that what its
// agent left can be found after the worker dies (leftovers.go); it is
// never resumed by mode, because a worker hands an unfinished task back
// instead.
type WorkerJob struct {
	TaskID  string
	Attempt int
	// Dir is the task's worktree, where the loop runs and keeps its .ralph/.
	Dir string
	// ConfigFiles are the task's config files (-c), later over earlier,
	// and ObjectiveFile its objective (-P); all are outside the worktree.
	ConfigFiles   []string
	ObjectiveFile string
	// Output is a file for the loop's stdout and stderr.
	Output string
	// Continued says the worktree starts at work in progress that another
	// worker (or an earlier run of this one) pushed, not at the base commit.
	Continued bool
	// Mark is the mark the loop's process group gives every process under
	// it (procgroup.StartMarked), recorded beside the job files (see
	// leftovers.go).
	Mark procgroup.Mark
	// Pin is where Dir's repository is (Checkout.Pin), handed to the loop.
	Pin git.Pin
	// Agent is the backend and model the task names (Task.Agent), checked
	// with the task; zero runs the configs'.
	Agent autopilot.Agent
}

// WorkerLoop is one running loop of a worker's. Unlike autopilot.Handle,
// whose Interrupt stops a loop at once for the autopilot to resume later
// in the same worktree, a worker stops its loops gently first and hands
// their tasks back, so it says which stop it means.
type WorkerLoop interface {
	// Wait blocks until the loop ends and says how.
	Wait() autopilot.LoopResult
	// Stop asks the loop to stop: runfiles.StopAtBoundary lets it finish
	// its iteration (it ends with reason "stopped", as after `ralph stop`,
	// or exits 130 like a loop that got SIGINT), runfiles.StopNow makes it
	// stop its agent now (exit 130). Either way its work can be continued
	// from what it committed. Asking for a stop already asked does nothing.
	Stop(mode runfiles.StopMode)
}

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// JetStream publishes results and events.
	JetStream jetstream.JetStream
	// Signer signs the worker's results, refusals and event batches; the
	// coordinator takes them only from workers whose keys it trusts.
	Signer *Signer
	// Claimer takes tasks off the queue.
	Claimer *Claimer
	// Checkouts are the worker's clones and worktrees, and its allow list.
	Checkouts Checkouts
	// Slots is how many tasks the worker runs at once; at least 1.
	Slots int
	// Host names the worker in its results and event batches.
	Host string
	// Run starts a task's loop in job.Dir.
	Run func(ctx context.Context, job WorkerJob) (WorkerLoop, error)
	// Validate says what is wrong with a task's config, or nil; a task
	// whose config it refuses is failed with its message. Nil is
	// ValidateConfigs.
	Validate func(configs []ConfigFile) error
	// TrustTaskCommands lets a task run commands on this machine: its
	// config's hooks, agent (cli: and the hats' backend:) and command
	// criteria, and its own acceptance commands. Without it all of these
	// are dropped (config.WithoutCommands), whatever the coordinator
	// trusts, and the loop runs the worker's own agent.
	TrustTaskCommands bool
	// Configs are the worker's own config files, laid over every task's
	// config (later wins, as with -c): its cli: is the agent the loops
	// run, and its hooks and criteria are the worker's owner's.
	Configs []string
	// Backend, when set, is the agent CLI the loops run (cli.backend),
	// over the task's and the worker's configs.
	Backend string
	// Sandbox is how the loops' agents are confined, laid over every
	// config of a task's loop: the worker's owner decides it, never the
	// task (whose hats' sandbox sections are dropped). A zero Mode leaves
	// the configs to decide.
	Sandbox config.Sandbox
	// KeepAlive is how often a running task's claim is kept alive; a third
	// of the claimer's AckWait if zero.
	KeepAlive time.Duration
	// Poll is how often a running loop's event log is read; 500 ms if zero.
	Poll time.Duration
	// BatchBytes bounds the lines of one event batch; 256 KiB if zero. A
	// single longer line goes in a batch of its own.
	BatchBytes int
	// RefusalDelay is how long a task this worker refused for a reason of
	// its own waits before a worker may take it again; 5 s if zero.
	RefusalDelay time.Duration
	// HandOff bounds what the worker does for a task after its context
	// ends or its loop ends: pushing, publishing, acknowledging; 2 minutes
	// if zero.
	HandOff time.Duration
	// Logger, when set, is told what the worker does and what went
	// wrong, from any of its goroutines: a sentence naming the task, with
	// the worker, task, run and attempt as attributes.
	Logger *slog.Logger
	// Redactor hides the worker's secret values in the results it
	// publishes: a loop's last words or a failed command's output must
	// not travel to the coordinator, which knows other secrets, and from
	// there into its log and the tracker. Nil hides nothing.
	Redactor *redact.Redactor
}

// Worker runs the tasks it claims, each in its own worktree, Slots at a
// time.
type Worker struct {
	opts WorkerOptions
	log  *slog.Logger // opts.Logger, its secrets hidden
	ran  *ranTasks

	mu      sync.Mutex
	loops   map[*runningLoop]struct{}
	hurried bool
	// spares are the worktrees of the tasks that ended, by repository URL,
	// for the next tasks to reuse.
	spares map[string][]Checkout
}

// runningLoop is a loop a slot runs, and how often it was interrupted.
type runningLoop struct {
	task string
	h    WorkerLoop
	// asked is the stop the loop was asked for, "" none yet.
	asked runfiles.StopMode
}

// NewWorker checks opts and fills in their defaults.
func NewWorker(opts WorkerOptions) (*Worker, error) {
	var errs []error
	if opts.JetStream == nil {
		errs = append(errs, errors.New("no JetStream"))
	}
	if opts.Claimer == nil {
		errs = append(errs, errors.New("no claimer"))
	}
	if opts.Signer == nil {
		errs = append(errs, errors.New("no key to sign results with"))
	}
	if opts.Backend != "" {
		if _, err := config.LoadBytes("--backend", backendOverlay(opts.Backend)); err != nil {
			errs = append(errs, fmt.Errorf("backend %q: %w", opts.Backend, err))
		}
	}
	if opts.Checkouts.Dir == "" {
		errs = append(errs, errors.New("no directory for the checkouts"))
	}
	if opts.Slots < 1 {
		errs = append(errs, fmt.Errorf("slots is %d; at least 1", opts.Slots))
	}
	if opts.Host == "" {
		errs = append(errs, errors.New("no host name"))
	}
	if opts.Run == nil {
		errs = append(errs, errors.New("no way to run a loop"))
	}
	if opts.KeepAlive < 0 || opts.Poll < 0 || opts.BatchBytes < 0 || opts.HandOff < 0 || opts.RefusalDelay < 0 {
		errs = append(errs, errors.New("a negative timing or size"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = opts.Claimer.AckWait() / 3
	}
	opts.Poll = orDefault(opts.Poll, 500*time.Millisecond)
	opts.HandOff = orDefault(opts.HandOff, 2*time.Minute)
	opts.RefusalDelay = orDefault(opts.RefusalDelay, 5*time.Second)
	if opts.BatchBytes == 0 {
		opts.BatchBytes = 256 << 10
	}
	if opts.Validate == nil {
		opts.Validate = ValidateConfigs
	}
	// Its secrets are hidden in what it logs, attributes too: it quotes
	// commands' output and errors, which may hold them.
	log := slog.New(linelog.Redacting(orDiscard(opts.Logger).Handler(), opts.Redactor.String, true)).With(attrWorker, opts.Host)
	ran := &ranTasks{dir: filepath.Join(opts.Checkouts.Dir, "ran")}
	return &Worker{opts: opts, log: log, ran: ran, loops: map[*runningLoop]struct{}{}, spares: map[string][]Checkout{}}, nil
}

// Run claims tasks and runs them, Slots at a time, until ctx ends. Then it
// asks the running loops to stop once their iteration is done (Hurry
// makes them stop now), commits and pushes their work in progress and
// hands their tasks back for another worker to continue at once, and
// returns ctx's error once every slot is free and every loop has ended.
func (w *Worker) Run(ctx context.Context) error {
	w.stopAllLeftovers()
	var wg sync.WaitGroup
	for range w.opts.Slots {
		wg.Go(func() { w.slot(ctx) })
	}
	wg.Wait()
	return ctx.Err()
}

// Hurry asks every loop that Run's ending context asked to stop at the
// end of its iteration to stop its agent now: for a second Ctrl-C. Loops
// stopped later are stopped now at once. Call it only once Run's context
// has ended: a loop stopped while the context lives ends as a failed task.
func (w *Worker) Hurry() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hurried = true
	for rl := range w.loops {
		w.logf(slog.LevelInfo, []any{attrTask, rl.task}, "task %s: interrupting its loop now", rl.task)
		w.stopTo(rl, runfiles.StopNow)
	}
}

// track adds a started loop to those Hurry reaches; the returned function
// removes it.
func (w *Worker) track(task string, h WorkerLoop) (*runningLoop, func()) {
	rl := &runningLoop{task: task, h: h}
	w.mu.Lock()
	w.loops[rl] = struct{}{}
	w.mu.Unlock()
	return rl, func() {
		w.mu.Lock()
		delete(w.loops, rl)
		w.mu.Unlock()
	}
}

// stopLoop stops rl once Run's context has ended: at the end of its
// iteration, or now after Hurry.
func (w *Worker) stopLoop(rl *runningLoop) {
	w.mu.Lock()
	defer w.mu.Unlock()
	mode := runfiles.StopAtBoundary
	if w.hurried {
		mode = runfiles.StopNow
	}
	w.stopTo(rl, mode)
}

// stopTo asks rl's loop for each stop up to mode it was not yet asked
// for, the gentle one first; w.mu is held.
func (w *Worker) stopTo(rl *runningLoop, mode runfiles.StopMode) {
	if rl.asked == "" {
		rl.asked = runfiles.StopAtBoundary
		rl.h.Stop(runfiles.StopAtBoundary)
	}
	if mode == runfiles.StopNow && rl.asked != runfiles.StopNow {
		rl.asked = runfiles.StopNow
		rl.h.Stop(runfiles.StopNow)
	}
}

// slot claims one task after another until ctx ends.
func (w *Worker) slot(ctx context.Context) {
	wait := time.Second
	for {
		claim, err := w.opts.Claimer.Claim(ctx)
		if ctx.Err() != nil {
			if claim != nil {
				w.release(ctx, claim)
			}
			return
		}
		if err != nil {
			w.logf(slog.LevelWarn, nil, "claiming a task: %v", err)
			if !sleep(ctx, wait) {
				return
			}
			wait = min(2*wait, 30*time.Second)
			continue
		}
		wait = time.Second
		w.runTask(ctx, claim)
	}
}

// logf logs the sentence people read of what the worker does, with attrs
// for handlers that show them; its secrets are hidden (see NewWorker).
func (w *Worker) logf(level slog.Level, attrs []any, format string, v ...any) {
	logAt(w.log, level, attrs, format, v...)
}

// handOffContext outlives ctx, for what a worker does with a task after
// ctx ended, within HandOff.
func (w *Worker) handOffContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), w.opts.HandOff)
}

// refusal says why the worker will not run t, or nil; a refusal that is
// about this worker, not the task, is a *workerRefusal.
func (w *Worker) refusal(t Task) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := w.opts.Checkouts.Allowed(t.RepoURL); err != nil {
		return &workerRefusal{err}
	}
	if err := w.opts.Validate(t.Configs); err != nil {
		return fmt.Errorf("invalid config: %w", err)
	}
	return nil
}

// workerRefusal is a reason of the worker's own not to run a task, which
// another worker may not have: the task goes back to the queue.
type workerRefusal struct{ error }

func (r *workerRefusal) Unwrap() error { return r.error }

// maxRefusals bounds how often a task is delivered and refused for
// workers' own reasons before the worker that refuses it last fails it:
// no worker may ever take it. With each refusal the task waits twice as
// long before it is offered again (RefusalDelay, doubled, up to a
// minute), so that the workers that may run it have time to take it.
const maxRefusals = 10

// refuse reports why the worker will not run claim's task and hands it
// back for another worker, a while later, so that the others come first;
// a task refused maxRefusals times fails with the reason.
func (w *Worker) refuse(ctx context.Context, claim *Claim, why error) {
	t := claim.Task
	if claim.Delivered >= maxRefusals {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s refused: %v; delivered %d times, it fails", t.ID, why, claim.Delivered)
		w.finish(ctx, claim, Result{ExitCode: exitcode.Fatal, Message: fmt.Sprintf(
			"no worker would run it: delivered %d times, the last to worker %s, which refused it: %v", claim.Delivered, w.opts.Host, why)})
		return
	}
	w.logf(slog.LevelWarn, taskAttrs(t), "task %s refused: %v; handed back for another worker", t.ID, why)
	w.handBackRefused(ctx, claim, why)
}

// refuseUntrusted hands back a task signed by a key this worker does not
// trust, runs nothing of it, and reports the refusal: another worker may
// trust the key, and a coordinator whose key no worker trusts learns why
// its tasks wait. Unlike a refusal for the worker's own reasons, the
// tenth delivery drops the task without a result: anyone may sign with a
// key of their own, and a result would end the attempt it names.
func (w *Worker) refuseUntrusted(ctx context.Context, claim *Claim) {
	t := claim.Task
	why := claim.Untrusted
	hint := fmt.Sprintf("if it is your coordinator's key, trust it: --trust-coordinator %s", why.Key)
	switch {
	case t.Validate() != nil || claim.Delivered >= maxRefusals:
		w.logf(slog.LevelWarn, []any{attrSubject, claim.msg.Subject(), attrDelivery, claim.Delivered}, "dropped a task message on %s, run nothing of it: %v (%s); delivered %d times", claim.msg.Subject(), why, hint, claim.Delivered)
		hctx, cancel := w.handOffContext(ctx)
		defer cancel()
		if err := claim.Drop(hctx); err != nil {
			w.logf(slog.LevelWarn, nil, "%v", err)
		}
	default:
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s refused, nothing of it run: %v (%s); handed back for another worker", t.ID, why, hint)
		w.handBackRefused(ctx, claim, why)
	}
}

// handBackRefused reports a refusal and hands the task back, for another
// worker to take once a delay that doubles with each delivery has passed.
func (w *Worker) handBackRefused(ctx context.Context, claim *Claim, why error) {
	t := claim.Task
	hctx, cancel := w.handOffContext(ctx)
	defer cancel()
	r := Result{Run: t.Run, TaskID: t.ID, Attempt: t.Attempt, Worker: w.opts.Host, ExitCode: exitcode.Fatal,
		Message: w.opts.Redactor.String(why.Error()), Refused: true, Delivery: claim.Delivered}
	if err := PublishResult(hctx, w.opts.JetStream, w.opts.Signer, r); err != nil {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: reporting its refusal: %v", t.ID, err)
	}
	delay := min(w.opts.RefusalDelay<<min(claim.Delivered-1, 16), time.Minute)
	if err := claim.HandBack(hctx, delay); err != nil {
		w.logf(slog.LevelWarn, nil, "%v", err)
	}
}

// admit says whether to run claim's task, and remembers it before it runs
// (see ranTasks): the same attempt sent again in another message is a
// replay, dropped unrun; the same message after the worker published its
// result (the acknowledgement was lost) gets that result again.
func (w *Worker) admit(ctx context.Context, claim *Claim) bool {
	t := claim.Task
	verdict, rec, err := w.ran.admit(claim)
	switch {
	case err != nil:
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: %v; handed back", t.ID, err)
		hctx, cancel := w.handOffContext(ctx)
		defer cancel()
		if err := claim.HandBack(hctx, w.opts.RefusalDelay); err != nil {
			w.logf(slog.LevelWarn, nil, "%v", err)
		}
		return false
	case verdict == admitReplay:
		w.logf(slog.LevelWarn, taskAttrs(t), "dropped task %s (run %s, attempt %d), run nothing of it: this worker took that attempt from message %d, "+
			"and message %d sends it again; a task is run once, a replay never", t.ID, t.Run, t.Attempt, rec.Sequence, claim.Sequence)
		hctx, cancel := w.handOffContext(ctx)
		defer cancel()
		if err := claim.Drop(hctx); err != nil {
			w.logf(slog.LevelWarn, nil, "%v", err)
		}
		return false
	case verdict == admitFinished:
		w.logf(slog.LevelInfo, taskAttrs(t), "task %s: finished here before; its result is sent again", t.ID)
		w.finish(ctx, claim, *rec.Result)
		return false
	}
	return true
}

// runTask runs claim's task to its end, or until ctx ends, and then
// reports it or hands it back.
func (w *Worker) runTask(ctx context.Context, claim *Claim) {
	t := claim.Task
	keep := w.keepAlive(ctx, claim)
	defer keep()
	if claim.Untrusted != nil {
		w.refuseUntrusted(ctx, claim)
		return
	}
	if err := w.refusal(t); err != nil {
		var own *workerRefusal
		if errors.As(err, &own) {
			w.refuse(ctx, claim, err)
			return
		}
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s refused: %v", t.ID, err)
		w.finish(ctx, claim, Result{ExitCode: exitcode.Fatal, Message: err.Error()})
		return
	}
	if !w.admit(ctx, claim) {
		return
	}
	w.stopLeftovers(t.ID)
	co, err := w.opts.Checkouts.PrepareFrom(ctx, w.takeSpare(t.RepoURL), t.ID, t.RepoURL, t.BaseCommit)
	if err == nil && t.MergeCommit != "" {
		err = w.opts.Checkouts.MergeInto(ctx, co, t.ID, t.RepoURL, t.MergeCommit)
	}
	if err != nil {
		if ctx.Err() != nil {
			w.release(ctx, claim)
			return
		}
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: %v", t.ID, err)
		w.finish(ctx, claim, Result{ExitCode: exitcode.Fatal, Message: "preparing the checkout: " + err.Error()})
		return
	}
	// Once its loop has ended (or never started) and its work is pushed.
	defer w.keepSpare(t.RepoURL, co)
	job, err := w.writeJob(t, co)
	if err != nil {
		w.finish(ctx, claim, Result{ExitCode: exitcode.Fatal, Message: err.Error()})
		return
	}
	fw := &forwarder{w: w, task: t, co: co}
	fw.base, err = eventsBase(ctx, w.opts.JetStream, w.opts.Signer, t)
	if err != nil {
		if ctx.Err() != nil {
			w.release(ctx, claim)
			return
		}
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: %v; its events are sent from offset %d", t.ID, err, fw.base)
	}
	h, err := w.opts.Run(ctx, job)
	if err != nil {
		if ctx.Err() != nil {
			w.release(ctx, claim)
			return
		}
		w.finish(ctx, claim, Result{ExitCode: exitcode.Fatal, Message: "starting the loop: " + err.Error()})
		return
	}
	w.logf(slog.LevelInfo, taskAttrs(t), "task %s: loop started in %s (attempt %d, delivery %d, from %s)", t.ID, co.Dir, t.Attempt, claim.Delivered, co.Start)

	res := w.follow(ctx, t, h, fw)
	w.forgetLoop(t.ID)
	hctx, cancel := w.handOffContext(ctx)
	defer cancel()
	fw.forward(hctx)
	if ctx.Err() != nil && stoppedEarly(res) {
		w.logf(slog.LevelInfo, taskAttrs(t), "task %s: its loop stopped (exit %d%s); handing the task back", t.ID, res.ExitCode, prefixed(": ", res.Message))
		w.handBack(hctx, claim, co)
		return
	}
	r := Result{ExitCode: res.ExitCode, Reason: res.Reason, Message: res.Message, Cost: res.Cost}
	head, err := PushResult(hctx, co, t.RepoURL, t.ID)
	if err != nil {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: pushing its branch: %v", t.ID, err)
		r.ExitCode = exitcode.Fatal
		r.Message = fmt.Sprintf("the loop ended (exit %d%s) but its branch could not be pushed: %v", res.ExitCode, prefixed(": ", res.Message), err)
	} else {
		r.Branch, r.Head = TaskBranch(t.ID), head
	}
	w.finish(ctx, claim, r)
}

// keepSpare keeps co, the worktree of a task whose loop has ended (or
// never started) and whose work was pushed, for the next task of the
// repository at url (Checkouts.PrepareFrom). It stays where it is until
// then, its loop's files with it.
func (w *Worker) keepSpare(url string, co Checkout) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spares[url] = append(w.spares[url], co)
}

// takeSpare is a worktree of an ended task of the repository at url, for
// the next; zero when there is none.
func (w *Worker) takeSpare(url string) Checkout {
	w.mu.Lock()
	defer w.mu.Unlock()
	spares := w.spares[url]
	if len(spares) == 0 {
		return Checkout{}
	}
	co := spares[len(spares)-1]
	w.spares[url] = spares[:len(spares)-1]
	return co
}

// follow waits for h's loop to end, forwarding its event log meanwhile,
// and asks it to stop when ctx ends.
func (w *Worker) follow(ctx context.Context, t Task, h WorkerLoop, fw *forwarder) autopilot.LoopResult {
	rl, untrack := w.track(t.ID, h)
	defer untrack()
	ended := make(chan autopilot.LoopResult, 1)
	go func() { ended <- h.Wait() }()
	tick := time.NewTicker(w.opts.Poll)
	defer tick.Stop()
	stopping := ctx.Done()
	for {
		select {
		case <-tick.C:
			if stopping != nil {
				w.tick(ctx, fw, ended)
				break
			}
			// The loop may take a while to finish its iteration once ctx
			// has ended; its events and work in progress are still sent
			// meanwhile, each tick within its own bound.
			tctx, cancel := w.handOffContext(ctx)
			w.tick(tctx, fw, ended)
			cancel()
		case <-stopping:
			stopping = nil
			w.logf(slog.LevelInfo, taskAttrs(t), "task %s: asking its loop to stop after its iteration", t.ID)
			w.stopLoop(rl)
		case res := <-ended:
			return res
		}
	}
}

// tick pushes the work in progress of fw's loop when an iteration of it
// finished at least a poll ago and the run goes on (it is what another
// worker continues from), and forwards the log's new lines. A loop that
// has ended meanwhile (ended is ready) has its work pushed with its result
// instead, in one push.
func (w *Worker) tick(ctx context.Context, fw *forwarder, ended <-chan autopilot.LoopResult) {
	if fw.progressed && len(ended) == 0 {
		fw.pushProgress(ctx)
	}
	fw.forward(ctx)
}

// stoppedEarly reports whether a loop ended because it was asked to stop
// (at the end of its iteration, or at once), not on its own.
func stoppedEarly(res autopilot.LoopResult) bool {
	return res.ExitCode == exitcode.Interrupted || res.Reason == string(runfiles.ReasonStopped) ||
		res.Reason == string(runfiles.ReasonInterrupted)
}

// handBack commits what the loop left uncommitted in co (nothing races
// with its agent: the loop has ended), pushes it as the task's work in
// progress and releases the claim, for another worker to go on from there.
func (w *Worker) handBack(ctx context.Context, claim *Claim, co Checkout) {
	t := claim.Task
	w.commitProgress(ctx, t, co)
	if err := PushProgress(ctx, co, t.RepoURL, t.ID); err != nil {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: pushing its work in progress: %v", t.ID, err)
	}
	w.release(ctx, claim)
}

// commitProgress commits what the loop left uncommitted in co, unless it
// is a merge still being resolved: ralph never commits conflict markers,
// and the next worker merges Task.MergeCommit again from the last work
// that was committed.
func (w *Worker) commitProgress(ctx context.Context, t Task, co Checkout) {
	repo := co.Repo()
	if markers, err := repo.UnresolvedChanges(ctx); err != nil || len(markers) > 0 {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: its uncommitted work is not committed: %s", t.ID, unresolvedReason(markers, err))
		return
	}
	msg := fmt.Sprintf("ralph: work in progress of %s, handed back by %s", t.ID, w.opts.Host)
	if committed, err := repo.CommitPaths(ctx, msg, ".", ":(exclude)"+git.StateDir); err != nil {
		w.logf(slog.LevelWarn, taskAttrs(t), "task %s: committing its uncommitted work: %v", t.ID, err)
	} else if committed {
		w.logf(slog.LevelInfo, taskAttrs(t), "task %s: committed its uncommitted work", t.ID)
	}
}

func unresolvedReason(markers []string, err error) string {
	if err != nil {
		return err.Error()
	}
	return "a merge is unresolved (conflict markers at " + strings.Join(markers, ", ") + ")"
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// keepAlive keeps claim alive until the returned function is called.
func (w *Worker) keepAlive(ctx context.Context, claim *Claim) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.opts.KeepAlive)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := claim.InProgress(ctx); err != nil && ctx.Err() == nil {
					w.logf(slog.LevelWarn, taskAttrs(claim.Task), "keeping task %s: %v", claim.Task.ID, err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// finish publishes r as the result of claim's task and then acknowledges
// the claim: in that order, so that a worker that dies in between runs the
// task again into a result stored once.
func (w *Worker) finish(ctx context.Context, claim *Claim, r Result) {
	ctx, cancel := w.handOffContext(ctx)
	defer cancel()
	r.Run, r.TaskID, r.Attempt, r.Worker = claim.Task.Run, claim.Task.ID, claim.Task.Attempt, w.opts.Host
	r.Message = w.opts.Redactor.String(r.Message)
	if err := r.Validate(); err != nil {
		// A task with no valid id or attempt cannot have a result; it is
		// dropped, since no worker could run it.
		w.logf(slog.LevelWarn, taskAttrs(claim.Task), "dropping task %q: %v", claim.Task.ID, err)
	} else if err := PublishResult(ctx, w.opts.JetStream, w.opts.Signer, r); err != nil {
		// Not acknowledged: the task comes again after the AckWait.
		w.logf(slog.LevelWarn, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt}, "task %s: publishing its result: %v", r.TaskID, err)
		return
	} else if err := w.ran.finished(claim, r); err != nil {
		// Should the acknowledgement be lost, the task runs again.
		w.logf(slog.LevelWarn, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt}, "task %s: remembering its result: %v", r.TaskID, err)
	}
	if err := claim.Done(ctx); err != nil {
		w.logf(slog.LevelWarn, nil, "%v", err)
		return
	}
	w.logf(slog.LevelInfo, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt}, "task %s: done (exit %d%s)", r.TaskID, r.ExitCode, prefixed(": ", r.Message))
}

// release hands claim's task back for another worker to continue.
func (w *Worker) release(ctx context.Context, claim *Claim) {
	ctx, cancel := w.handOffContext(ctx)
	defer cancel()
	if err := claim.Release(ctx); err != nil {
		w.logf(slog.LevelWarn, nil, "%v", err)
		return
	}
	w.logf(slog.LevelInfo, taskAttrs(claim.Task), "task %s: handed back", claim.Task.ID)
}

// writeJob writes t's config files and objective next to its worktree,
// outside it, where the loop reads them, followed by the worker's own
// config files and backend. A worker that trusts task commands writes the
// task's files as they came and a file that adds the task's own commands
// to the acceptance criteria; one that does not writes the task's config
// without anything that runs a command (config.WithoutCommands), and says
// what it left out.
func (w *Worker) writeJob(t Task, co Checkout) (WorkerJob, error) {
	dir := filepath.Join(jobsDir(w.opts.Checkouts.Dir), t.ID)
	if err := os.RemoveAll(dir); err != nil {
		return WorkerJob{}, fmt.Errorf("task %s's files: %w", t.ID, err)
	}
	// The task's config, objective and the loop's output (what its agent
	// printed) are the user's alone.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return WorkerJob{}, fmt.Errorf("task %s's files: %w", t.ID, err)
	}
	job := WorkerJob{
		TaskID:        t.ID,
		Attempt:       t.Attempt,
		Dir:           co.Dir,
		ObjectiveFile: filepath.Join(dir, "objective.md"),
		Output:        filepath.Join(dir, "output.log"),
		Continued:     co.Continued,
		Mark:          procgroup.NewMark(),
		Pin:           co.Pin,
		Agent:         t.Agent(),
	}
	if err := writeLoopRecord(dir, job.Mark); err != nil {
		return WorkerJob{}, fmt.Errorf("task %s's files: %w", t.ID, err)
	}
	files, err := w.taskConfigs(t)
	if err != nil {
		return WorkerJob{}, err
	}
	write := func(c ConfigFile) error {
		// Numbered, as two files may have one name.
		path := filepath.Join(dir, fmt.Sprintf("%d-%s", len(job.ConfigFiles)+1, c.Name))
		if err := os.WriteFile(path, c.Data, 0o600); err != nil {
			return fmt.Errorf("task %s's config: %w", t.ID, err)
		}
		job.ConfigFiles = append(job.ConfigFiles, path)
		return nil
	}
	for _, c := range files {
		if err := write(c); err != nil {
			return WorkerJob{}, err
		}
	}
	// The worker's own files are read where they are, so that a relative
	// command in them names the file beside them.
	job.ConfigFiles = append(job.ConfigFiles, w.opts.Configs...)
	if w.opts.Backend != "" {
		if err := write(ConfigFile{Name: "worker-backend.yml", Data: backendOverlay(w.opts.Backend)}); err != nil {
			return WorkerJob{}, err
		}
	}
	if w.opts.Sandbox.Mode != "" {
		if err := write(ConfigFile{Name: "worker-sandbox.yml", Data: sandboxOverlay(w.opts.Sandbox)}); err != nil {
			return WorkerJob{}, err
		}
	}
	if err := os.WriteFile(job.ObjectiveFile, []byte(t.Objective), 0o600); err != nil {
		return WorkerJob{}, fmt.Errorf("task %s's objective: %w", t.ID, err)
	}
	return job, nil
}

// eventsBase is where the task's event lines already sent end: where the
// coordinator's copy ended when it sent the task, or, when a worker has
// sent more since (an earlier worker on this attempt), the end of the last
// batch, if this worker or one the task names (Task.Workers) signed it. A
// loop continued from work in progress starts a new log; its lines are
// sent after those, so the coordinator's copy of the task's events grows
// on and no batch's id is one already taken.
func eventsBase(ctx context.Context, js jetstream.JetStream, self *Signer, t Task) (int64, error) {
	s, err := js.Stream(ctx, EventsStream)
	if err != nil {
		return t.EventsOffset, fmt.Errorf("stream %s: %w", EventsStream, err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, EventsSubject(t.ID))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return t.EventsOffset, nil
	}
	if err != nil {
		return t.EventsOffset, fmt.Errorf("the last event batch of task %s: %w", t.ID, err)
	}
	workers, err := NewKeyring(RoleWorker, append(slices.Clone(t.Workers), self.PublicKey())...)
	if err != nil {
		return t.EventsOffset, fmt.Errorf("the task's workers: %w", err)
	}
	if _, err := workers.verify(msg.Subject, msg.Data, msg.Header); err != nil {
		return t.EventsOffset, fmt.Errorf("the last event batch of task %s is not one of its workers': %w", t.ID, err)
	}
	var e Events
	if err := json.Unmarshal(msg.Data, &e); err != nil {
		return t.EventsOffset, nil //nolint:nilerr // an invalid batch is not the coordinator's
	}
	return max(t.EventsOffset, e.Offset+int64(len(e.Lines))), nil
}

// forwarder follows a task's loop's event log: it sends new lines to the
// coordinator and pushes work in progress after each iteration.
type forwarder struct {
	w    *Worker
	task Task
	co   Checkout
	base int64
	// sent is how many bytes of the coordinator's copy this forwarder has
	// published: the lines as shown, secrets hidden, which are not the
	// log's bytes, so the copy's offsets are its own.
	sent int64

	path   string
	rd     *events.Reader
	failed bool // the log cannot be followed any more
	// progressed says an iteration finished since the work in progress
	// was last pushed, and the run goes on.
	progressed bool
}

// forward sends the lines appended since the last call, in batches, and
// notes whether an iteration finished among them. A batch that cannot be
// published is read again next time.
func (f *forwarder) forward(ctx context.Context) {
	if f.failed {
		return
	}
	if f.rd == nil {
		path, err := runfiles.CurrentLog(f.co.Dir)
		if err != nil {
			return // none yet
		}
		f.path, f.rd = path, events.NewReader(path, 0)
	}
	start := f.rd.Offset()
	recs, err := f.rd.Read()
	if err != nil {
		f.w.logf(slog.LevelWarn, taskAttrs(f.task), "task %s: following its event log: %v", f.task.ID, err)
		f.failed = true
		return
	}
	if len(recs) == 0 {
		return
	}
	for _, rec := range recs {
		ev, err := events.ParseLine(rec.Line)
		if err != nil || ev.Source != events.SourceRalph {
			continue
		}
		switch ev.Topic {
		case runfiles.TopicIterationFinished:
			f.progressed = true
		case runfiles.TopicLoopTerminate:
			// The run is over: what the loop leaves is pushed once it has
			// exited, with its result or as it is handed back.
			f.progressed = false
		}
	}
	// The batches are the lines read, each with the worker's secrets
	// hidden (a line the agent appended by hand holds them as written,
	// and the coordinator does not know them), cut after whole lines.
	from := start // where the batch's first line is in the log
	var batch []byte
	for i, rec := range recs {
		line := f.w.opts.Redactor.Line(rec.Line)
		if len(batch) > 0 && len(batch)+len(line)+1 > f.w.opts.BatchBytes {
			if !f.publish(ctx, batch) {
				f.rd = events.NewReader(f.path, from) // again next time
				return
			}
			from, batch = recs[i-1].End(), batch[:0]
		}
		batch = append(append(batch, line...), '\n')
	}
	if !f.publish(ctx, batch) {
		f.rd = events.NewReader(f.path, from)
	}
}

// pushProgress pushes the worktree's HEAD as the task's work in progress.
func (f *forwarder) pushProgress(ctx context.Context) {
	f.progressed = false
	if err := PushProgress(ctx, f.co, f.task.RepoURL, f.task.ID); err != nil {
		f.w.logf(slog.LevelWarn, taskAttrs(f.task), "task %s: pushing its work in progress: %v", f.task.ID, err)
	}
}

// publish sends lines as one batch, after those sent before, and reports
// whether it was stored.
func (f *forwarder) publish(ctx context.Context, lines []byte) bool {
	err := PublishEvents(ctx, f.w.opts.JetStream, f.w.opts.Signer, Events{
		Run: f.task.Run, TaskID: f.task.ID, Attempt: f.task.Attempt, Worker: f.w.opts.Host,
		Offset: f.base + f.sent, Lines: lines,
	})
	if err != nil {
		f.w.logf(slog.LevelWarn, taskAttrs(f.task), "task %s: sending its events: %v", f.task.ID, err)
		return false
	}
	f.sent += int64(len(lines))
	return true
}

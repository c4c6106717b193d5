package autopilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// Options are what an autopilot run needs.
type Options struct {
	// Repo is the repository's root: the user's checkout, on the base
	// branch.
	Repo string
	// Configs are the config files every task's loop runs with (absolute).
	Configs []string
	// Settings are the config's autopilot section with the flags applied.
	Settings config.Autopilot
	// Sets are the --set assignments the config was loaded with (the
	// unfinished run's first, UnfinishedSets), recorded so that a run
	// started again goes on with them.
	Sets []string
	// Criteria are the config's acceptance criteria, which every task's
	// loop keeps.
	Criteria []criteria.Spec
	// Sandbox is how the slots' agents are confined (Config.SlotSandbox);
	// each task's overlay gives it to the task's loop. The zero value
	// leaves the loops' own config to decide.
	Sandbox config.Sandbox
	Source  tasks.Source
	Runner  Runner
	// PullRequests is where deliver: pr opens its pull requests and
	// follows them (Settings.PR); required with deliver: pr, unused
	// otherwise.
	PullRequests forge.PullRequests
	// VerifySandbox is the confinement of autopilot.verify's commands in
	// the scratch worktree dir of a merge, whose repository is where pin
	// says: the slots' (they run what the slots' agents wrote). Nil, or
	// a nil Sandbox, runs them unconfined.
	VerifySandbox func(dir string, pin git.Pin) criteria.Sandbox
	// OnEvent is told each event once it is recorded; nil for none.
	OnEvent func(events.Event, *runfiles.AutopilotState)
	// Hooks run the user's hooks on the autopilot's events; nil for none.
	Hooks Hooks
	// Redactor hides secret values in everything the autopilot writes or
	// passes on: its events (and so its state, progress.md, the hooks and
	// OnEvent) and what it tells the tracker (a failure's reason, which
	// the tracker keeps and ralph commits). Nil hides nothing.
	Redactor *redact.Redactor
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// NewRunID makes a run id; a time-based one when nil.
	NewRunID func() string
	// Fault is called at the named points below, for crash tests: it
	// returns only if the process is to go on. Nil in normal runs.
	Fault func(point string) bool
}

// Fault points, where a crash test may kill the autopilot.
const (
	FaultRunning  = "autopilot.running"  // a task's loop started and recorded
	FaultMerged   = "autopilot.merged"   // merge.done recorded; the base branch not moved yet
	FaultPushed   = "autopilot.pushed"   // deliver: push or pr: the merge is on the remote; merge.pushed not recorded yet
	FaultAdvanced = "autopilot.advanced" // the base branch moved; the task not closed yet
	FaultClosed   = "autopilot.closed"   // the task closed; task.completed not recorded yet
)

func (a *Autopilot) fault(point string) {
	if a.opts.Fault != nil {
		a.opts.Fault(point)
	}
}

// Result is how an autopilot run ended.
type Result struct {
	ExitCode  int
	Completed int
	Failed    int
	// Resumable is set when the run was interrupted and `ralph autopilot`
	// will go on with it.
	Resumable bool
}

// Autopilot is one run of the coordinator: an explicit state machine
// driven by one goroutine, which alone changes the state, the base branch
// and the tracker. Loops and merges run in goroutines of their own and
// report back on channels.
type Autopilot struct {
	opts    Options
	repo    git.Repo
	base    string
	journal *journal
	merger  *merger

	handles  map[string]Handle // task → its running loop
	slotDone chan slotResult
	// merging is the task whose merge is being prepared, "".
	merging string
	// landing are verified merges not landed yet, each made on the one
	// before (queue.go's chained merges): they land together, by one
	// fast-forward and one commit of the tracker's closes.
	landing   []runfiles.TaskMerge
	mergeDone chan mergeDone
	control   <-chan runfiles.ControlRequest
	// questions are what the running loops wait on a person for, as
	// followQuestions sees it change.
	questions chan questionSeen

	stopping    bool // no new tasks; finish what runs
	interrupted bool // loops were interrupted; the run stays resumable
	// held remembers which task was reported held behind which, so a
	// hold is reported once.
	held map[string]string
	// fatal ends the run with exit 3 once nothing runs.
	fatal error
	// runnerCtx is what loops are started and attached to under: the run's
	// context without its cancellation, since a runner's handle outlives
	// the step that starts it and loops stop through Handle.Interrupt.
	runnerCtx context.Context
	// revived counts the resumes of loops killed from outside, by task.
	revived map[string]int
	// merges maps each task that ralph's merge commits on the base branch
	// name to the newest of them; landed is what the log says followed
	// them; closeTried holds the tasks whose close this run retried.
	merges     map[string]string
	landed     landings
	closeTried map[string]bool
	// mergedHere holds the tasks this process merged, whose close has
	// not been tried: the tracker need not be asked whether it is done.
	mergedHere map[string]bool
	// follow looks at the pull requests of the tasks in review, under
	// lookCtx, which ends with the run.
	follow  *follower
	lookCtx context.Context
	// commonDir is the repository's common git directory, once known
	// (pin).
	commonDir string
	// cleaner removes finished tasks' worktrees and branches while the
	// run goes on.
	cleaner *cleaner
	// launcher makes tasks' worktrees and starts their loops while the
	// run goes on.
	launcher *launcher
	// spares are merged tasks' worktrees, kept for the next tasks.
	spares *spares
}

type slotResult struct {
	slot    string
	task    string
	attempt int
	res     LoopResult
}

type mergeDone struct {
	task runfiles.TaskMerge
	res  mergeResult
	err  error
}

func (a *Autopilot) now() time.Time { return a.journal.now() }

func (a *Autopilot) state() *runfiles.AutopilotState { return a.journal.state }

// Run runs the autopilot in opts.Repo until no task is ready and nothing
// runs, max_tasks tasks have finished, a stop request has been honoured,
// or ctx ends (an interrupt: running loops are interrupted and stay
// resumable).
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewRunID == nil {
		opts.NewRunID = func() string { return opts.Now().UTC().Format("20060102-150405") }
	}
	opts.Source = watchSource(redactSource(opts.Source, opts.Redactor), git.Repo{Dir: opts.Repo})
	a := &Autopilot{opts: opts, repo: git.Repo{Dir: opts.Repo}, handles: map[string]Handle{}, runnerCtx: context.WithoutCancel(ctx),
		slotDone: make(chan slotResult), mergeDone: make(chan mergeDone), questions: make(chan questionSeen),
		held: map[string]string{}, revived: map[string]int{}, closeTried: map[string]bool{}, mergedHere: map[string]bool{}, follow: newFollower(opts.Settings.PR.PollSeconds),
		cleaner: newCleaner(), launcher: newLauncher()}
	var stopLooks context.CancelFunc
	a.lookCtx, stopLooks = context.WithCancel(ctx)
	defer stopLooks()
	defer a.follow.stop()
	dir := runfiles.In(opts.Repo).Path()
	runID := opts.NewRunID()
	lock, err := acquireLock(ctx, opts.Repo, runID, opts.Now())
	if err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	defer func() { _ = lock.Release() }()
	if err := a.open(ctx, dir, runID, lock); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	defer func() { _ = a.journal.log.Close() }()
	// A run that ends on an error leaves the state as far as it got; the
	// next one folds the log on from it either way.
	defer func() { _ = a.journal.flush() }()
	a.spares = newSpares(a.merger.worktrees)
	// Last, once no clean-up makes another: a spare outlives no run.
	defer func() {
		ctx, cancel := steady(ctx)
		defer cancel()
		a.removeSpares(ctx)
	}()
	// A run that ends on an error before its loop has clean-ups under
	// way too; they end before the log closes.
	defer a.cleaner.wait()
	defer a.launcher.stop()
	control, stopWatch, err := watchControl(runfiles.Dir(dir).Control())
	if err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	defer stopWatch()
	a.control = control
	sctx, cancel := steady(ctx)
	defer cancel()
	// Known before any launch or clean-up, which read it in goroutines.
	if err := a.knowCommonDir(sctx); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	if err := a.reconcile(sctx); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	if err := a.cleanLeftovers(sctx); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	if err := a.retryCloses(sctx); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	if err := a.unfollowed(); err != nil {
		return Result{ExitCode: exitcode.Fatal}, err
	}
	return a.loop(ctx)
}

// loop is the state machine: act on what the state allows, then wait for
// the next thing to happen.
func (a *Autopilot) loop(ctx context.Context) (Result, error) {
	for {
		// An interrupt may have come while the last event was handled:
		// nothing new starts once it has.
		ctx = a.takeInterrupt(ctx)
		// A task that could not be started ends the run as every other
		// error does: once the loops already running have ended.
		a.check(a.step(ctx))
		if done, code := a.done(); done {
			a.pushRest(ctx)
			return a.finish(code, a.fatal)
		}
		a.check(a.journal.flush())
		select {
		case r := <-a.slotDone:
			a.check(a.loopEnded(ctx, r))
		case m := <-a.mergeDone:
			a.check(a.merged(ctx, m))
		case req := <-a.control:
			a.check(a.controlRequest(req))
		case q := <-a.questions:
			a.check(a.questionChanged(q))
		case <-a.follow.due:
			a.look()
		case seen := <-a.follow.seen:
			a.check(a.reviewed(ctx, seen))
		case <-a.cleaner.done:
			a.check(a.cleanedUp())
		case l := <-a.launcher.done:
			a.check(a.launched(ctx, l))
		case <-ctx.Done():
		}
	}
}

// takeInterrupt interrupts the running loops once ctx has ended, and
// returns the context the run goes on with until they have: ctx without
// its cancellation.
func (a *Autopilot) takeInterrupt(ctx context.Context) context.Context {
	if ctx.Err() == nil {
		return ctx
	}
	if !a.interrupted {
		a.interrupt()
	}
	return context.WithoutCancel(ctx)
}

// check keeps the first error that must end the run once nothing runs.
func (a *Autopilot) check(err error) {
	if err != nil && a.fatal == nil {
		a.fatal = err
		a.stopping = true
	}
}

// step starts what can start: retries and new tasks in free slots, and
// the next merge.
func (a *Autopilot) step(ctx context.Context) error {
	if a.fatal != nil || a.interrupted {
		return nil
	}
	sctx, cancel := steady(ctx)
	defer cancel()
	// The merge queue is the one line every task passes through: its next
	// merge is under way in its goroutine while the slots are filled.
	a.nextMerge(ctx)
	a.startRetries(sctx)
	if !a.stopping && !a.state().Paused {
		if err := a.fill(ctx, sctx); err != nil {
			return err
		}
	}
	return a.followReviews(ctx)
}

// steady is ctx without its cancellation, bounded by steadyTimeout: what
// the autopilot does itself (a tracker's command, a git command, a
// commit, all that follows a verified merge) runs to its end once begun,
// as a step cut off by an interrupt would fail its task, leave a tracker
// half-written or a merge half-landed. Only loops and verification stop
// for an interrupt.
func steady(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), steadyTimeout)
}

// steadyTimeout bounds a steady step: a tracker that hangs must not hold
// the run forever.
const steadyTimeout = 5 * time.Minute

// startRetries gives free slots to tasks whose merge conflicted: they are
// running tasks' continuations, so a pause or a stop lets them run too.
func (a *Autopilot) startRetries(ctx context.Context) {
	st := a.state()
	for len(st.Retry) > 0 && freeSlot(st) != "" && a.fatal == nil {
		a.check(a.startRetry(ctx, st.Retry[0], freeSlot(st)))
	}
}

// done reports whether the run is over, and its exit status.
func (a *Autopilot) done() (bool, int) {
	st := a.state()
	switch {
	case len(a.handles) > 0 || len(a.launcher.pending) > 0 || a.merging != "" || a.cleaner.pending > 0:
		return false, 0
	case a.interrupted:
		return true, exitcode.Interrupted
	case a.fatal != nil:
		return true, exitcode.Fatal
	case !st.Idle():
		return false, 0
	case st.Paused && !a.stopping:
		return false, 0
	case a.following() && !a.stopping:
		// The pull requests of the tasks in review wait for a person;
		// a stop leaves them to the next run.
		return false, 0
	case len(st.Failed) > 0:
		return true, exitcode.Failure
	}
	return true, exitcode.OK
}

// finish records how the run ended.
func (a *Autopilot) finish(code int, cause error) (Result, error) {
	st := a.state()
	resumable := a.interrupted || cause != nil
	res := Result{ExitCode: code, Completed: len(st.Completed), Failed: len(st.Failed), Resumable: resumable}
	p := runfiles.AutopilotPayload{Completed: res.Completed, Failed: res.Failed, ExitCode: &code, Resumable: resumable}
	switch {
	case a.interrupted:
		p.Reason = "interrupted"
	case cause != nil:
		p.Reason, p.Message = "fatal", cause.Error()
	case a.stopping:
		p.Reason = "stopped"
	default:
		p.Reason = "all done"
		if err := a.journal.record(runfiles.TopicAllDone, runfiles.AutopilotPayload{Completed: res.Completed, Failed: res.Failed}); err != nil {
			return res, err
		}
	}
	if err := a.journal.record(runfiles.TopicAutopilotStopped, p); err != nil {
		return res, err
	}
	if err := a.journal.flush(); err != nil {
		return res, err
	}
	return res, cause
}

// interrupt stops every running loop now; they stay resumable.
func (a *Autopilot) interrupt() {
	a.interrupted, a.stopping = true, true
	for _, h := range a.handles {
		h.Interrupt()
	}
}

func (a *Autopilot) controlRequest(req runfiles.ControlRequest) error {
	switch req {
	case runfiles.ControlPause:
		if !a.state().Paused {
			return a.journal.record(runfiles.TopicAutopilotPaused, runfiles.AutopilotPayload{})
		}
	case runfiles.ControlResume:
		if a.state().Paused {
			return a.journal.record(runfiles.TopicAutopilotResumed, runfiles.AutopilotPayload{})
		}
	case runfiles.ControlStop:
		if !a.stopping {
			a.stopping = true
			return a.journal.record(runfiles.TopicAutopilotStopping, runfiles.AutopilotPayload{Message: "no new tasks; running ones finish and merge"})
		}
	case runfiles.ControlStopNow:
		if !a.interrupted {
			a.interrupt()
			return a.journal.record(runfiles.TopicAutopilotStopping, runfiles.AutopilotPayload{Message: "running loops are interrupted and stay resumable"})
		}
	}
	return nil
}

// fill starts tasks in free slots: retries first, then ready tasks in
// priority order, skipping those whose components a running task holds.
// It starts no more once ctx ends; sctx is what it does meanwhile.
func (a *Autopilot) fill(ctx, sctx context.Context) error {
	st := a.state()
	if freeSlot(st) == "" || !canStart(st) || backlogged(st) {
		return nil
	}
	ready, err := a.opts.Source.Ready(sctx)
	if err != nil {
		if st.Idle() && !a.following() {
			return fmt.Errorf("list the ready tasks: %w", err)
		}
		return a.notice("listing the ready tasks failed; trying again when a task finishes: " + err.Error())
	}
	slices.SortStableFunc(ready, func(x, y tasks.Task) int { return cmp.Compare(x.Priority, y.Priority) })
	for _, t := range ready {
		if freeSlot(st) == "" || !canStart(st) || backlogged(st) || ctx.Err() != nil {
			break
		}
		if st.Started(t.ID) {
			continue
		}
		if err := a.consider(sctx, t); err != nil {
			return err
		}
	}
	return nil
}

// consider starts task t unless its id is unusable or a running task holds
// one of its components.
func (a *Autopilot) consider(ctx context.Context, t tasks.Task) error {
	if err := tasks.ValidID(t.ID); err != nil {
		return a.failAssign(ctx, t.ID, t.Title, fmt.Sprintf("the task id %q cannot name a worktree or a branch: %v", t.ID, err))
	}
	busy := busyComponents(a.state())
	for _, c := range t.Components() {
		if holder, ok := busy[c]; ok {
			if a.held[t.ID] == holder {
				return nil
			}
			a.held[t.ID] = holder
			return a.journal.record(runfiles.TopicTaskHeld, runfiles.AutopilotPayload{Task: t.ID, Title: t.Title, HeldBy: holder, Components: []string{c}})
		}
	}
	delete(a.held, t.ID)
	if commit := a.alreadyMerged(t.ID); commit != "" {
		return a.closeMerged(ctx, t.ID, t.Title, commit)
	}
	return a.start(ctx, t, freeSlot(a.state()))
}

func (a *Autopilot) notice(msg string) error {
	return a.journal.record(runfiles.TopicAutopilotNotice, runfiles.AutopilotPayload{Message: msg})
}

// runsOn is where the runner runs loops when not in their worktrees
// here, "" when it runs them here.
func (a *Autopilot) runsOn() string {
	if e, ok := a.opts.Runner.(Elsewhere); ok {
		return e.Where()
	}
	return ""
}

// worktree is where task's loop runs.
func (a *Autopilot) worktree(task string) string {
	return filepath.Join(a.merger.worktrees, task)
}

func branchOf(task string) string { return "ralph/" + task }

// start assigns t to slot, claims it, makes its worktree and starts its
// loop. A failure in any of these fails the task, not the run.
//
// t is as Ready gave it, whole (the Source contract): asking the tracker
// again would cost a command source without show: a list a task.
func (a *Autopilot) start(ctx context.Context, t tasks.Task, slot string) error {
	if _, err := a.agentOf(t); err != nil {
		// Before the claim: nothing of the task is started.
		return a.failAssign(ctx, t.ID, t.Title, err.Error())
	}
	p := runfiles.AutopilotPayload{Task: t.ID, Title: t.Title, Slot: slot, Worktree: a.relative(a.worktree(t.ID)), RunsOn: a.runsOn(),
		Branch: branchOf(t.ID), Attempt: 1, Components: t.Components()}
	if err := a.journal.record(runfiles.TopicTaskAssigned, p); err != nil {
		return err
	}
	if claimed, err := a.claim(ctx, t.ID, t.Title); err != nil || !claimed {
		return err
	}
	if err := a.writeTaskFiles(t, ""); err != nil {
		return a.failAssign(ctx, t.ID, t.Title, err.Error())
	}
	mode := runfiles.StartNew
	if _, err := os.Stat(a.worktree(t.ID)); err == nil {
		// An earlier run failed this task and kept its worktree: its work
		// goes on from there, in a new run of its loop.
		mode = runfiles.StartFresh
	}
	return a.launch(ctx, slot, t.ID, 1, mode)
}

// ensureWorktree makes task's worktree on its branch, from start when the
// branch is new, unless it is there: the branch's work is kept, and what
// a removal cut short is cleared away.
func (a *Autopilot) ensureWorktree(ctx context.Context, task, start string) error {
	dir := a.worktree(task)
	if _, err := os.Lstat(dir); err == nil {
		if a.repo.IsWorktreeRoot(ctx, dir) {
			return a.onBranch(ctx, task, start)
		}
		// What a removal cut short; AddWorktree prunes its registration.
		if err := a.repo.RemoveWorktree(ctx, dir); err != nil {
			return err
		}
	}
	if a.useSpare(ctx, task, start) {
		return nil
	}
	return a.repo.AddWorktree(ctx, dir, branchOf(task), start)
}

// onBranch checks out task's branch in its worktree when a kill left a
// spare moved there before its branch was made: detached, with no branch
// of the task's (and so no work of it, as its loop starts after).
func (a *Autopilot) onBranch(ctx context.Context, task, start string) error {
	pin, err := a.pinIn(a.worktree(task))
	if err != nil {
		return err
	}
	head, err := os.ReadFile(filepath.Join(pin.GitDir, "HEAD"))
	if err != nil || strings.TrimSpace(string(head)) == "ref: refs/heads/"+branchOf(task) || a.repo.BranchExists(ctx, branchOf(task)) {
		return nil
	}
	return a.repo.CheckoutBranch(ctx, pin, a.worktree(task), branchOf(task), start)
}

// startPoint is the commit a task's worktree starts from: the base
// branch's tip; with deliver: pr, which never moves the local base
// branch, the remote's, fetched (the local one's when the remote cannot
// be reached: its merge will say why).
func (a *Autopilot) startPoint(ctx context.Context) string {
	if a.merger.deliver.mode == deliverPR {
		if tip, err := a.merger.fetchBase(ctx, ""); err == nil && tip != "" {
			return tip
		}
	}
	// Named, not resolved: git resolves it as it makes the worktree.
	return "refs/heads/" + a.base
}

// knowCommonDir asks for the repository's common git directory, which
// every task's worktree shares, once a run.
func (a *Autopilot) knowCommonDir(ctx context.Context) error {
	if a.commonDir != "" {
		return nil
	}
	common, err := a.repo.CommonDir(ctx)
	a.commonDir = common
	return err
}

// pinIn is where the repository of the worktree at dir is (git.Pin), from
// the repository's side, once knowCommonDir has asked: it runs no git,
// and reads nothing the state machine changes.
func (a *Autopilot) pinIn(dir string) (git.Pin, error) {
	return git.WorktreePinIn(a.commonDir, dir)
}

// watch reports the end of a loop to the state machine, and while it
// runs, the question it waits on.
func (a *Autopilot) watch(slot, task string, attempt int, h Handle) {
	a.handles[task] = h
	stopFollowing, err := a.followQuestions(slot, task)
	if err != nil {
		stopFollowing = func() {}
		a.check(a.notice(fmt.Sprintf("a question %s's agent asks will not be shown here (`ralph autopilot status` shows it): %v", task, err)))
	}
	go func() {
		res := h.Wait()
		stopFollowing()
		a.slotDone <- slotResult{slot: slot, task: task, attempt: attempt, res: res}
	}()
}

// loopEnded acts on a finished loop: completed work is queued for merge,
// an interrupted loop stays for a resume, anything else fails the task.
func (a *Autopilot) loopEnded(ctx context.Context, r slotResult) error {
	delete(a.handles, r.task)
	switch {
	case r.res.Completed():
		p := runfiles.AutopilotPayload{Task: r.task, Slot: r.slot, Attempt: r.attempt}
		if r.res.Cost != (runfiles.CostTotal{}) {
			p.Cost = &r.res.Cost
		}
		// Unsynced: a restart that never saw it reads the loop's end again.
		return a.journal.recordUnsynced(runfiles.TopicTaskFinished, p)
	case a.interrupted && (r.res.Interrupted() || r.res.Reason == ""):
		// Interrupted by this autopilot, before or after its run began:
		// the slot keeps it, for the next run to go on with.
		return nil
	case a.cutOff(r):
		if state, res := inspectLoop(a.worktree(r.task)); state == loopEnded {
			// Killed once its run had ended: the run says how.
			r.res = res
			return a.loopEnded(ctx, r)
		}
		a.revived[r.task]++
		if err := a.notice(fmt.Sprintf("the loop of %s was cut off (%s); resuming it", r.task, describeLoopEnd(r.res))); err != nil {
			return err
		}
		return a.launch(ctx, r.slot, r.task, r.attempt, runfiles.StartResume)
	}
	return a.failTask(ctx, r.task, describeLoopEnd(r.res))
}

// maxRevivals bounds how often a loop that something outside ralph killed
// is resumed before its task fails.
const maxRevivals = 2

// cutOff reports whether a loop was killed or interrupted from outside
// (its run did not end; it is resumable), and may be resumed once more.
func (a *Autopilot) cutOff(r slotResult) bool {
	killed := r.res.ExitCode >= 128 && (r.res.Reason == "" || r.res.Reason == "interrupted")
	return killed && !a.stopping && a.revived[r.task] < maxRevivals
}

func describeLoopEnd(res LoopResult) string {
	msg := fmt.Sprintf("its loop exited %d", res.ExitCode)
	if res.Reason != "" {
		msg += " (" + res.Reason + ")"
	}
	if res.Message != "" {
		msg += ": " + res.Message
	}
	return msg
}

// failTask records the failure of a task whose loop ran, and tells the
// tracker where it can hold it. The task's worktree and branch are kept
// for inspection.
func (a *Autopilot) failTask(ctx context.Context, task, reason string) error {
	return a.fail(ctx, runfiles.TopicTaskFailed, task, "", reason, reason)
}

// failAssign records a task that could not be given its slot: its id
// cannot name a worktree, the tracker refused the claim, or its worktree
// or loop could not be made. No loop of it ran, which its event, its
// outcome and its note in the tracker say.
func (a *Autopilot) failAssign(ctx context.Context, task, title, reason string) error {
	return a.fail(ctx, runfiles.TopicTaskAssignFailed, task, title, reason, "not started: "+reason)
}

// fail records topic for task and gives the tracker note.
func (a *Autopilot) fail(ctx context.Context, topic, task, title, reason, note string) error {
	ctx, cancel := steady(ctx)
	defer cancel()
	if title == "" {
		title = a.state().TitleOf(task)
	}
	if err := a.journal.record(topic, runfiles.AutopilotPayload{Task: task, Title: title, Reason: reason}); err != nil {
		return err
	}
	if err := a.opts.Source.Fail(ctx, task, note); err != nil {
		return a.notice(fmt.Sprintf("recording the failure of %s in %s failed: %v", task, a.opts.Source.Name(), err))
	}
	return a.commitTracker(ctx, "ralph: "+task+" failed")
}

// commitTracker commits ralph's changes to the tracker's files on the base
// branch, so they are never left uncommitted in the user's checkout: the
// source's files, or, for a source that cannot name them, the paths its
// commands changed.
func (a *Autopilot) commitTracker(ctx context.Context, message string) error {
	files := a.opts.Source.Files()
	watched, ok := a.opts.Source.(*watchedSource)
	if ok {
		files = watched.pending()
	}
	if len(files) == 0 {
		return nil
	}
	ctx, cancel := steady(ctx)
	defer cancel()
	if _, err := a.repo.CommitPaths(ctx, message, files...); err != nil {
		return fmt.Errorf("commit the tracker's changes on %s: %w", a.base, err)
	}
	if ok {
		watched.committed()
	}
	return nil
}

// relative is path relative to the repository, for events and status.
func (a *Autopilot) relative(path string) string {
	if rel, err := filepath.Rel(a.opts.Repo, path); err == nil {
		return rel
	}
	return path
}

var errNoBase = errors.New("the repository has no commit yet: commit something on the base branch first")

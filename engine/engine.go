package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Engine runs one loop. Make one with New; Run it once.
type Engine struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time

	dir        string // .ralph
	checkpoint runfiles.Checkpoint
	lock       *runfiles.Lock

	st     *runfiles.RunState
	phase  runfiles.Phase
	events *events.Log
	reader *events.Reader

	// iter is the iteration in flight, or the last one run.
	iter iteration
	// lastSnapshot is the last look at the workspace, while it is still
	// true: nil once a check's command may have changed the files.
	lastSnapshot *Snapshot
	// lastTree is the tree of the workspace last recorded (inspect.go).
	lastTree lastTree
	// dirID is .ralph/ as the run locked it; dirLost says it was deleted
	// under the run and recreated (lostdir.go).
	dirID   *dirIdentity
	dirLost bool
	// rateWaits counts the rate limits in a row, for the backoff.
	rateWaits int
	// unpriced are the models this process has warned have no price.
	unpriced []string

	// Why the loop is about to end, set before entering terminating.
	ending *runfiles.Termination
	// started is when this process began the run or resumed it.
	started time.Time
	stop    *stopWatcher
	// fatal is the error that ended the run as fatal, returned by Run.
	fatal error
	// gitArmed is set once a confined run changed what decides what git
	// runs in the workspace: ralph runs no git there any more (gitguard.go).
	gitArmed *GitArmedError
	// hookCtx is what hooks run under: the run's context without its
	// cancellation, since hooks on loop.terminate must run after Ctrl-C
	// too (each has its own time limit). hookFailed is a hook's failure
	// that ends the run after the current step (hooks.go).
	hookCtx    context.Context
	hookFailed error
	// caughtUp are the lines the previous run's state was caught up with
	// (start.go), for the hooks once the run is resumed.
	caughtUp []events.Record
	// endedBefore says a resume found the run ended already (start.go).
	endedBefore bool
	// reportMu keeps a wave's workers from reporting their activity at
	// once: a Reporter is called from one goroutine at a time.
	reportMu sync.Mutex
	// commitLocks are the lock files a commit in the workspace takes, none
	// for a workspace without a repository (orphan.go).
	commitLocks []string
}

// files are the run's files under .ralph/.
func (e *Engine) files() runfiles.Dir { return runfiles.Dir(e.dir) }

// New checks the options and makes an engine.
func New(opts Options) (*Engine, error) {
	switch {
	case opts.Workspace == "":
		return nil, errors.New("engine: no workspace")
	case opts.Hats == nil:
		return nil, errors.New("engine: no hats")
	case opts.Backend == nil:
		return nil, errors.New("engine: no backend")
	case opts.Reporter == nil:
		return nil, errors.New("engine: no reporter")
	}
	switch opts.Start {
	case "":
		opts.Start = runfiles.StartNew
	case runfiles.StartNew, runfiles.StartResume, runfiles.StartFresh:
	default:
		return nil, fmt.Errorf("engine: unknown start mode %q", opts.Start)
	}
	if opts.Objective == "" && opts.Start != runfiles.StartResume {
		return nil, errors.New("engine: no objective (a new run needs one)")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if !opts.Redactor.Empty() {
		opts.Reporter = redactingReporter{to: opts.Reporter, r: opts.Redactor}
	}
	dir := runfiles.In(opts.Workspace).Path()
	if opts.StateDir != "" {
		dir = opts.StateDir
	}
	return &Engine{
		opts:       opts,
		log:        opts.Logger,
		now:        opts.Now,
		dir:        dir,
		checkpoint: runfiles.Checkpoint{Path: runfiles.Dir(dir).State()},
		phase:      runfiles.PhaseStarting,
	}, nil
}

// Run runs the loop until it terminates. It returns the summary of a run
// that ended by one of the termination rules (completion, a limit,
// interruption, …), and an error only for a fatal problem that kept the loop
// from running: the lock held, no run to resume, a backend missing.
func (e *Engine) Run(ctx context.Context) (Summary, error) {
	lock, err := runfiles.AcquireLock(ctx, e.files().Lock(), e.lockInfo(""),
		runfiles.LockOptions{Wait: e.opts.Wait, OrphanWait: e.opts.OrphanLockWait, Notify: e.opts.Reporter.Warn})
	if err != nil {
		return Summary{}, err
	}
	e.lock = lock
	e.hookCtx = context.WithoutCancel(ctx)
	defer func() { _ = e.lock.Release() }()
	if e.opts.Exclude != nil {
		if err := e.opts.Exclude(); err != nil {
			return Summary{}, err
		}
	}
	if c, ok := e.opts.Repo.(io.Closer); ok {
		defer func() { _ = c.Close() }() // a workspace watch
	}
	// .gitignore is not among them: ralph memory add writes it without
	// the lock.
	runfiles.RemoveStaleTempFiles(e.dir, runfiles.StateFile, runfiles.CurrentEventsFile)
	if err := runfiles.IgnoreOwnFiles(e.dir, e.opts.Settings.ShareMemories); err != nil {
		return Summary{}, err
	}
	e.rememberDir()
	if prev := lock.Previous; prev.PID != 0 && !runfiles.ProcessAlive(prev.PID) {
		e.opts.Reporter.Warn(fmt.Sprintf("took over the lock left by pid %d (run %s, started %s), which is no longer running",
			prev.PID, prev.RunID, prev.StartedAt.Local().Format(time.DateTime)))
	}
	e.stop, err = watchStop(e.files().Stop())
	if err != nil {
		return Summary{}, err
	}
	defer e.stop.Close()
	defer func() {
		if e.events != nil {
			_ = e.events.Close()
		}
	}()
	return e.loop(ctx)
}

func (e *Engine) loop(ctx context.Context) (Summary, error) {
	for !e.phase.IsTerminal() {
		if err := e.checkDir(ctx); err != nil {
			return Summary{}, err
		}
		next, err := e.step(ctx)
		if err != nil {
			return Summary{}, err
		}
		e.setPhase(e.afterHooks(next))
	}
	return e.summary(), e.fatal
}

// step runs the method of the current phase and returns the next phase.
func (e *Engine) step(ctx context.Context) (runfiles.Phase, error) {
	switch e.phase {
	case runfiles.PhaseStarting:
		return e.starting(ctx)
	case runfiles.PhaseSettling:
		return e.settling(ctx)
	case runfiles.PhaseChecking:
		return e.checking(ctx)
	case runfiles.PhaseSelecting:
		return e.selecting()
	case runfiles.PhaseRunning:
		return e.running(ctx)
	case runfiles.PhaseCollecting:
		return e.collecting()
	case runfiles.PhaseWave:
		return e.waving(ctx)
	case runfiles.PhaseWaiting:
		return e.waiting(ctx)
	case runfiles.PhasePacing:
		return e.pacing(ctx)
	case runfiles.PhaseAwaitingHuman:
		return e.awaitingHuman(ctx)
	case runfiles.PhaseTerminating:
		return e.terminating()
	case runfiles.PhaseDone:
		return runfiles.PhaseDone, nil
	}
	return "", fmt.Errorf("engine: unknown phase %q", e.phase)
}

func (e *Engine) setPhase(next runfiles.Phase) {
	if next != e.phase {
		e.log.Debug("entering phase", "phase", next, "from", e.phase)
	}
	e.phase = next
}

func (e *Engine) lockInfo(runID string) runfiles.LockInfo {
	host, _ := os.Hostname()
	return runfiles.LockInfo{RunID: runID, PID: os.Getpid(), Host: host, StartedAt: e.now().UTC()}
}

// append writes lines to the log in one write and folds everything the log
// now holds past the checkpoint, including lines other processes appended.
func (e *Engine) append(lines ...events.Event) error {
	if len(lines) > 0 {
		now := e.now().UTC()
		for i := range lines {
			if lines[i].TS.IsZero() {
				lines[i].TS = now
			}
		}
		e.redactEvents(lines)
		e.fault(FaultAppendBefore)
		if e.fault(FaultAppendTorn) {
			e.tearWrite(lines)
		}
		if err := e.writeFault(FileEventLog); err != nil {
			return storageError(OpAppendLog, e.events.Path(), err)
		}
		if err := e.events.AppendBatch(lines); err != nil {
			return storageError(OpAppendLog, e.events.Path(), err)
		}
		e.fault(FaultAppendAfter)
	}
	return e.fold()
}

// fault calls the crash-test hook, if any.
func (e *Engine) fault(point string) bool {
	return e.opts.Fault != nil && e.opts.Fault(point)
}

// writeFault calls the test hook that fails writes to one of ralph's
// files, if any.
func (e *Engine) writeFault(file string) error {
	if e.opts.WriteFault == nil {
		return nil
	}
	return e.opts.WriteFault(file)
}

// tearWrite writes the first half of a step's bytes and then dies, as a
// power cut in the middle of a write would leave the log.
func (e *Engine) tearWrite(lines []events.Event) {
	var buf []byte
	for _, l := range lines {
		b, _ := events.EncodeLine(l)
		buf = append(buf, b...)
	}
	f, err := ralphdir.OpenFile(e.dir, e.events.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, _ = f.Write(buf[:len(buf)/2])
		_ = f.Close()
	}
	e.fault(FaultDie)
}

// fold applies every complete line past the checkpoint offset.
func (e *Engine) fold() error {
	recs, err := e.reader.Read()
	if err != nil {
		return fmt.Errorf("read event log: %w", err)
	}
	var hooked []events.Record
	for _, rec := range recs {
		rec = e.redactRecord(rec)
		hooked = e.hookLines(e.st, hooked, rec)
		e.st.Apply(rec, e.opts.Hats)
	}
	// Blank lines produce no record but are consumed all the same.
	e.st.Offset = e.reader.Offset()
	return e.fireHooks(hooked)
}

// saveAs writes the checkpoint recording the phase about to be entered.
// The log is flushed to stable storage first: a checkpoint must never
// claim lines that a power failure could take back. The checkpoint only
// saves reading the log again, and a resume folds every line past it, so
// it is written where the run hands control away (an agent starts, the
// loop waits or ends), not after every step: one fsync of each per
// iteration.
func (e *Engine) saveAs(next runfiles.Phase) error {
	e.checkpoint.BeforeRename = func() { e.fault(FaultCheckpointTemp) }
	if err := e.writeFault(FileCheckpoint); err != nil {
		return storageError(OpCheckpoint, e.checkpoint.Path, err)
	}
	if err := e.events.Sync(); err != nil {
		return storageError(OpAppendLog, e.events.Path(), err)
	}
	if err := e.checkpoint.Save(e.st, next, e.now()); err != nil {
		return storageError(OpCheckpoint, e.checkpoint.Path, err)
	}
	e.fault(FaultCheckpointAfter)
	return nil
}

// hat returns a configured hat or the coordinator.
func (e *Engine) hat(id string) hats.Hat {
	h, _ := e.opts.Hats.Get(id)
	return h
}

func (e *Engine) backendFor(hatID string) Backend {
	if b, ok := e.opts.PerHat[hatID]; ok && b != nil {
		return b
	}
	return e.opts.Backend
}

package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

func (e *Engine) starting(ctx context.Context) (runfiles.Phase, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e.started = e.now()
	prev, err := e.loadPrevious()
	if err != nil {
		return "", err
	}
	if err := e.stopOrphanedAgent(prev); err != nil {
		return "", err
	}
	e.findCommitLocks(ctx)
	if e.opts.Start == runfiles.StartResume {
		if e.endedAlready(ctx, prev) {
			return e.reportEnded(prev)
		}
		if err := e.resume(prev); err != nil {
			return "", err
		}
	} else if err := e.begin(ctx, prev); err != nil {
		return "", err
	}
	if err := e.lock.Update(e.lockInfo(e.st.RunID)); err != nil {
		return "", err
	}
	for _, w := range e.costLimitWarnings() {
		e.opts.Reporter.Warn(w)
	}
	if e.st.Wave != nil && e.st.Terminated == nil {
		// A wave cut off: its workers without a result run again, before
		// anything else, and then it is merged.
		return runfiles.PhaseWave, e.saveAs(runfiles.PhaseWave)
	}
	return runfiles.PhaseSettling, e.saveAs(runfiles.PhaseSettling)
}

// loadPrevious reads the checkpoint of the previous run, if any. A state
// file that cannot be used is moved aside and the run rebuilt from its log.
func (e *Engine) loadPrevious() (*runfiles.RunState, error) {
	st, _, err := e.checkpoint.Load()
	var corrupt *runfiles.CorruptStateError
	switch {
	case err == nil:
		return e.newerRunThan(st)
	case errors.Is(err, runfiles.ErrNoState):
		return e.rebuildFromLog()
	case errors.As(err, &corrupt):
		dest, mvErr := e.checkpoint.MoveAside(e.now())
		if mvErr != nil {
			return nil, mvErr
		}
		e.opts.Reporter.Warn(fmt.Sprintf("%v; moved it to %s and rebuilding the run from its event log", err, dest))
		return e.rebuildFromLog()
	default:
		return nil, err
	}
}

// newerRunThan returns the run that .ralph/current-events names when it is
// not the checkpoint's: a new run writes its log before its first
// checkpoint, so a ralph killed in between leaves the previous run's
// state.json beside the new run's log. The log is the source of truth.
func (e *Engine) newerRunThan(st *runfiles.RunState) (*runfiles.RunState, error) {
	rel, err := runfiles.CurrentLogRel(e.dir)
	if err != nil {
		return nil, err
	}
	if rel == "" || filepath.Clean(rel) == filepath.Clean(st.EventsFile) {
		return e.catchUp(st)
	}
	rebuilt, err := e.rebuildFromLog()
	if err != nil || rebuilt == nil {
		return st, err
	}
	e.opts.Reporter.Warn(fmt.Sprintf("%s is of run %s, but run %s in %s started after it; rebuilding run %s from its event log",
		runfiles.StateFile, st.RunID, rebuilt.RunID, rel, rebuilt.RunID))
	return rebuilt, nil
}

// catchUp folds the lines the log has past the checkpoint: a ralph killed
// between a step's append and its checkpoint leaves them there, and whether
// the run ended (loop.terminate) can be among them. A checkpoint whose
// offset the log does not reach, or reaches in the middle of a line, is of
// a log that has since been truncated or replaced: it cannot be trusted, so
// it is moved aside and the run rebuilt from the log as it is.
func (e *Engine) catchUp(st *runfiles.RunState) (*runfiles.RunState, error) {
	path, err := runfiles.LogPath(e.opts.Workspace, st.EventsFile)
	if err != nil {
		return nil, err
	}
	size, atLine, err := offsetInLog(path, st.Offset)
	if err != nil {
		return nil, err
	}
	if !atLine {
		dest, err := e.checkpoint.MoveAside(e.now())
		if err != nil {
			return nil, err
		}
		why := "ends before it"
		if size >= st.Offset {
			why = "has no line starting there"
		}
		e.opts.Reporter.Warn(fmt.Sprintf("%s has folded %s up to byte %d, but the log is %d bytes and %s (truncated or replaced since); moved %s to %s and rebuilding the run from its event log",
			runfiles.StateFile, st.EventsFile, st.Offset, size, why, runfiles.StateFile, dest))
		return e.rebuildFromLog()
	}
	r := events.NewReader(path, st.Offset)
	recs, err := r.Read()
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		e.caughtUp = e.hookLines(st, e.caughtUp, rec)
		st.Apply(rec, e.opts.Hats)
	}
	st.Offset = max(st.Offset, r.Offset())
	return st, nil
}

// offsetInLog returns the size of the log at path (0 when it does not
// exist) and whether offset is where one of its lines starts, or its end:
// 0, or just past a newline.
func offsetInLog(path string, offset int64) (size int64, atLine bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, offset == 0, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("check event log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("check event log: %w", err)
	}
	size = info.Size()
	if offset == 0 || offset > size {
		return size, offset == 0, nil
	}
	var before [1]byte
	if _, err := f.ReadAt(before[:], offset-1); err != nil {
		return size, false, fmt.Errorf("check event log: %w", err)
	}
	return size, before[0] == '\n', nil
}

// rebuildFromLog folds the current run's log from its first line. It
// returns nil when there is no log to rebuild from.
func (e *Engine) rebuildFromLog() (*runfiles.RunState, error) {
	rel, err := runfiles.CurrentLogRel(e.dir)
	if err != nil || rel == "" {
		return nil, err
	}
	st := runfiles.NewRunState()
	st.EventsFile = rel
	path, err := runfiles.LogPath(e.opts.Workspace, rel)
	if err != nil {
		return nil, err
	}
	r := events.NewReader(path, 0)
	recs, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("rebuild state from %s: %w", rel, err)
	}
	e.caughtUp = nil
	for _, rec := range recs {
		rec = e.redactRecord(rec)
		e.caughtUp = e.hookLines(st, e.caughtUp, rec)
		st.Apply(rec, e.opts.Hats)
	}
	if st.RunID == "" {
		return nil, nil // a log without loop.started is not a run
	}
	return st, nil
}

// endedAlready reports whether a resume finds the run ended, and with
// nothing to go on with: it completed or was cancelled, or it ended on a
// limit (or stuck) that the resume's settings still set, so that going on
// would end it again at once for the same reason. A supervisor that lost
// track of its loop may resume it whatever happened meanwhile; such a
// resume says how the run ended and writes nothing, so the run's end is
// recorded, and its hooks fire, once. A run that failed goes on: its
// failure counts are forgiven on resume (RunState.forgiveFailures).
func (e *Engine) endedAlready(ctx context.Context, prev *runfiles.RunState) bool {
	if prev == nil || prev.Terminated == nil {
		return false
	}
	t := prev.Terminated
	if !t.Reason.Resumable() {
		return true
	}
	if !t.Reason.SaysHowToGoOn() {
		return false
	}
	e.st = prev
	again := e.termination(ctx)
	e.st = nil
	return again != nil && again.Reason == t.Reason
}

// reportEnded tells the reporter how the run that a resume found ended,
// and ends this process's part with nothing written but what hooks a
// killed ralph left due on the run's last lines (its end among them).
func (e *Engine) reportEnded(prev *runfiles.RunState) (runfiles.Phase, error) {
	e.st, e.endedBefore = prev, true
	if caughtUp := e.caughtUp; len(caughtUp) > 0 && e.opts.Hooks != nil {
		e.caughtUp = nil
		if err := e.openLog(prev.EventsFile, prev.Offset); err != nil {
			return "", err
		}
		if err := e.fireHooks(caughtUp); err != nil {
			return "", err
		}
		if err := e.saveAs(runfiles.PhaseDone); err != nil {
			return "", err
		}
	}
	e.opts.Reporter.LoopFinished(e.summary())
	return runfiles.PhaseDone, nil
}

func (e *Engine) resume(prev *runfiles.RunState) error {
	if prev == nil {
		return &NoRunError{Why: "no state or event log in " + e.dir}
	}
	e.st = prev
	if err := e.openLog(prev.EventsFile, prev.Offset); err != nil {
		return err
	}
	if err := e.repairTornTail(); err != nil {
		return err
	}
	// The lines the checkpoint did not have may have hooks not yet started.
	caughtUp := e.caughtUp
	e.caughtUp = nil
	if err := e.fireHooks(caughtUp); err != nil {
		return err
	}
	// Lines written while ralph was down (the agent's last events, a
	// half-finished step) are folded before anything else happens.
	if err := e.fold(); err != nil {
		return err
	}
	lines := []events.Event{runfiles.RalphEvent(runfiles.TopicLoopResumed, runfiles.LoopResumedRecord{Iteration: e.st.Iteration,
		MaxIter: e.opts.Settings.MaxIterations, Hats: e.hatIDs(), Launch: e.opts.Launch})}
	if r := e.st.Running; r != nil {
		lines = append(lines, runfiles.RalphEvent(runfiles.TopicIterationFinished, runfiles.IterationFinishedRecord{
			Iteration: r.Iteration, Hat: r.Hat, Outcome: runfiles.OutcomeInterrupted,
			Message: "ralph stopped while the agent was running", Confirming: r.Confirming}))
	}
	if err := e.append(lines...); err != nil {
		return err
	}
	e.opts.Reporter.LoopStarted(e.runInfo(true))
	return nil
}

func (e *Engine) begin(ctx context.Context, prev *runfiles.RunState) error {
	if prev != nil && (prev.Terminated == nil || prev.Terminated.Reason.Unfinished()) && e.opts.Start != runfiles.StartFresh {
		why := "it was still running"
		if prev.Terminated != nil {
			why = string(prev.Terminated.Reason)
		}
		return &UnfinishedRunError{RunID: prev.RunID, Iteration: prev.Iteration, Why: why}
	}
	if prev != nil {
		if err := e.archive(prev); err != nil {
			return err
		}
	}
	runID := newRunID(e.now())
	rel, err := e.newEventsFile()
	if err != nil {
		return err
	}
	e.st = runfiles.NewRunState()
	e.st.EventsFile = rel
	if err := e.openLog(rel, 0); err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomic(e.dir, e.files().CurrentEvents(), []byte(rel+"\n")); err != nil {
		return fmt.Errorf("write %s: %w", runfiles.CurrentEventsFile, err)
	}
	// The baseline is taken before the first line is written, so the run
	// either starts with it or has not started at all.
	look := e.snapshot(ctx)
	head := look.Head
	e.lastSnapshot = &look
	started := e.loopStartedRecord(runID)
	started.Head = head
	lines := []events.Event{runfiles.RalphEvent(runfiles.TopicLoopStarted, started)}
	if len(e.opts.Settings.AcceptanceCriteria) > 0 {
		e.notice(fmt.Sprintf("checking the %s once before the first iteration (the baseline)",
			plural.Count(len(e.opts.Settings.AcceptanceCriteria), "acceptance criterion", "acceptance criteria")))
	}
	if base, ok := e.baseline(ctx, head); ok {
		lines = append(lines, base)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lines = append(lines, runfiles.RalphEvent(e.opts.Settings.StartingEvent, defaultStartPayload))
	if err := e.append(lines...); err != nil {
		return err
	}
	e.opts.Reporter.LoopStarted(e.runInfo(false))
	return nil
}

func (e *Engine) loopStartedRecord(runID string) runfiles.LoopStartedRecord {
	return runfiles.LoopStartedRecord{RunID: runID, Objective: e.opts.Objective, Source: e.opts.Source,
		Config: e.opts.Config, Hats: e.hatIDs(), Completion: e.opts.Settings.CompletionTopic,
		MaxIter: e.opts.Settings.MaxIterations, Launch: e.opts.Launch}
}

// hatIDs lists the configured hats' IDs in config order, never nil, so that
// the log records an empty list rather than no list.
func (e *Engine) hatIDs() []string {
	ids := []string{}
	for _, h := range e.opts.Hats.Hats() {
		ids = append(ids, h.ID)
	}
	return ids
}

// archive keeps the previous run's checkpoint and scratchpad under
// runs/<id>/ before a new run replaces them. Its event log stays where it
// is.
func (e *Engine) archive(prev *runfiles.RunState) error {
	dir := e.files().Run(prev.RunID)
	if err := ralphdir.MkdirAll(e.dir, dir); err != nil {
		return fmt.Errorf("archive run %s: %w", prev.RunID, err)
	}
	// The scratchpad is a run's working notes: the next run's agent would
	// take the old run's "next: step 3" for its own.
	if err := os.Rename(e.scratchpadPath(), filepath.Join(dir, runfiles.ScratchpadFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archive run %s: %w", prev.RunID, err)
	}
	data, err := runfiles.ReadNoFollow(e.checkpoint.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("archive run %s: %w", prev.RunID, err)
	}
	if checkpointRunID(data) != prev.RunID {
		// prev was rebuilt from its log because ralph died before its
		// first checkpoint; the file is an older run's, archived already.
		return nil
	}
	if err := ralphdir.WriteFileAtomic(e.dir, filepath.Join(dir, runfiles.StateFile), data); err != nil {
		return fmt.Errorf("archive run %s: %w", prev.RunID, err)
	}
	if prev.Terminated == nil || prev.Terminated.Reason.Unfinished() {
		e.opts.Reporter.Warn(fmt.Sprintf("archived unfinished run %s to %s", prev.RunID, dir))
	}
	return nil
}

// checkpointRunID is the run id a state file's contents name, "" if none.
func checkpointRunID(data []byte) string {
	var probe struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(data, &probe)
	return probe.RunID
}

// newEventsFile picks events-YYYYMMDD-HHMMSS.jsonl, adding a suffix when a
// run already used that second.
func (e *Engine) newEventsFile() (string, error) {
	if err := ralphdir.MkdirAll(e.dir, e.dir); err != nil {
		return "", err
	}
	stamp := e.now().UTC().Format("20060102-150405")
	for i := 0; ; i++ {
		name := runfiles.EventLogName(stamp, i)
		if _, err := os.Lstat(filepath.Join(e.dir, name)); errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(e.files().Rel(), name), nil
		}
	}
}

func (e *Engine) openLog(rel string, offset int64) error {
	path := filepath.Join(e.opts.Workspace, rel)
	if err := ralphdir.MkdirAll(e.dir, filepath.Dir(path)); err != nil {
		return err
	}
	l, err := events.OpenLog(path)
	if err != nil {
		return ralphdir.Explain(path, err)
	}
	e.events = l
	e.reader = events.NewReader(path, offset)
	return nil
}

// repairTornTail closes a last line that a crash cut off in the middle of a
// write. The bytes are kept (the log is append-only); the newline makes the
// line complete, so it is read once as malformed, and loop.repaired says why.
func (e *Engine) repairTornTail() error {
	start, size, err := tornTail(e.events.Path())
	if err != nil || start < 0 {
		return err
	}
	rec := runfiles.RalphEvent(runfiles.TopicLoopRepaired, runfiles.RepairedRecord{Offset: start, Bytes: size - start})
	rec.TS = e.now().UTC()
	line, err := events.EncodeLine(rec)
	if err != nil {
		return err
	}
	e.opts.Reporter.Warn(fmt.Sprintf("the event log ended in a partial line at byte %d (a write cut off by a crash); closed it", start))
	return storageError(OpAppendLog, e.events.Path(), e.events.AppendRaw(append([]byte("\n"), line...)))
}

// tornTail returns where the log's unterminated last line starts, or -1.
func tornTail(path string) (start, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return -1, 0, fmt.Errorf("check event log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return -1, 0, err
	}
	size = info.Size()
	const chunk = 64 * 1024
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		from := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-from], from)
		if err != nil && n < int(end-from) {
			return -1, 0, fmt.Errorf("check event log: %w", err)
		}
		if end == size && buf[n-1] == '\n' {
			return -1, size, nil
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i) + 1, size, nil
		}
		end = from
	}
	return 0, size, nil
}

func (e *Engine) runInfo(resumed bool) RunInfo {
	info := RunInfo{RunID: e.st.RunID, Resumed: resumed, Objective: e.objective(), Source: e.source(),
		Config: e.opts.Config, Hats: e.hatIDs(), EventsFile: e.st.EventsFile, MaxIter: e.opts.Settings.MaxIterations,
		Iterations: e.st.Iteration, Cost: e.st.Cost(), Usage: e.st.Usage, Commits: e.st.Commits,
		Spec: e.source(), Tasks: 1}
	if e.specPath() != "" {
		info.Spec = e.specName()
		_, info.Tasks = checklist.Counts(e.specItems())
	}
	return info
}

func newRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// defaultStartPayload is the starting event's payload when the config gives none.
const defaultStartPayload = "Begin work on the objective."

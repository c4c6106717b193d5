package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// An agent's `git clean -fdx` or `rm -rf .ralph` deletes ralph's directory
// under a running loop. The files ralph holds open (the lock, the event
// log) live on unlinked, so writes to them succeed and are lost, and the
// next checkpoint fails with a bare "no such file or directory". Worse, the
// lock no longer guards the workspace: another ralph could start beside
// this one.
//
// So between steps the engine checks that .ralph/ is still the directory
// it locked. When it is not, it recreates what it holds in memory — the
// lock, the event log (the run's start and the events still pending, at new
// offsets), the pointer to it and the checkpoint — and ends the run at the
// next check as fatal, saying what happened (CauseLostDir). `ralph loop
// --resume` then continues from there. What only the files held is gone: the raw output
// of earlier iterations, memories and the scratchpad.

// dirIdentity is what .ralph/ and its lock file were when the run took the
// lock.
type dirIdentity struct {
	dir, lock os.FileInfo
}

// rememberDir records .ralph/ and the lock file as they are now.
func (e *Engine) rememberDir() {
	dir, err1 := os.Stat(e.dir)
	lock, err2 := os.Stat(e.lock.Path())
	if err1 == nil && err2 == nil {
		e.dirID = &dirIdentity{dir: dir, lock: lock}
	}
}

// dirGone reports whether .ralph/ or the lock file was deleted or replaced
// since rememberDir.
func (e *Engine) dirGone() bool {
	if e.dirID == nil {
		return false
	}
	dir, err := os.Stat(e.dir)
	if err != nil || !os.SameFile(dir, e.dirID.dir) {
		return true
	}
	lock, err := os.Stat(e.lock.Path())
	return err != nil || !os.SameFile(lock, e.dirID.lock)
}

// What ralph says when .ralph/ was deleted under the run: as it happens,
// and as the run's ending; the command line adds how to continue.
const (
	lostDir        = runfiles.DirName + "/ was deleted while the run was going (an agent's `git clean -fdx` or `rm -rf` does that)"
	lostDirWarning = lostDir + "; recreating the run's state from memory (the raw output of earlier iterations, memories and the scratchpad are lost) and stopping after this step"
	lostDirMessage = lostDir + "; ralph recreated the run's state from memory and stopped"
)

// checkDir recreates .ralph/ if it is gone, once, and makes the loop stop
// at its next check rather than start another iteration.
func (e *Engine) checkDir(ctx context.Context) error {
	if e.dirLost || e.st == nil || !e.dirGone() {
		return nil
	}
	e.opts.Reporter.Warn(lostDirWarning)
	if err := e.recreateDir(ctx); err != nil {
		return fmt.Errorf("%s/ was deleted under the run and could not be recreated: %w", runfiles.DirName, err)
	}
	e.dirLost = true
	if e.phase == runfiles.PhaseSelecting {
		e.phase = runfiles.PhaseChecking
	}
	return nil
}

// recreateDir takes the lock on a new lock file, then writes a new event
// log, the pointer to it and the checkpoint. A ralph that started in the
// meantime keeps the workspace: this run then writes nothing.
func (e *Engine) recreateDir(ctx context.Context) error {
	lock, err := runfiles.AcquireLock(ctx, e.files().Lock(), e.lockInfo(e.st.RunID),
		runfiles.LockOptions{OrphanWait: e.opts.OrphanLockWait})
	if err != nil {
		return err
	}
	_ = e.lock.Release()
	e.lock = lock
	e.rememberDir()
	if err := runfiles.IgnoreOwnFiles(e.dir, e.opts.Settings.ShareMemories); err != nil {
		return err
	}
	if err := e.rewriteLog(); err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomic(e.dir, e.files().CurrentEvents(), []byte(e.st.EventsFile+"\n")); err != nil {
		return fmt.Errorf("write %s: %w", runfiles.CurrentEventsFile, err)
	}
	return e.saveAs(e.phase)
}

// rewriteLog writes a new event log under the old name: the run's start
// and every event still waiting for a hat, so that the log alone rebuilds
// the run, and moves the state's offsets to the new lines.
func (e *Engine) rewriteLog() error {
	if e.events != nil {
		_ = e.events.Close()
	}
	started := e.loopStartedRecord(e.st.RunID)
	started.Objective, started.Head = e.objective(), e.st.StartCommit
	lines := []events.Event{runfiles.RalphEvent(runfiles.TopicLoopStarted, started)}
	lines[0].TS = e.st.StartedAt.UTC()
	for _, p := range e.st.Pending {
		lines = append(lines, p.Event)
	}
	for _, u := range e.st.Undecided {
		lines = append(lines, u.Event)
	}
	var buf []byte
	moved := map[int64]int64{}
	for i, ev := range lines {
		line, err := events.EncodeLine(ev)
		if err != nil {
			return err
		}
		if i > 0 {
			moved[e.oldOffset(i-1)] = int64(len(buf))
		}
		buf = append(buf, line...)
	}
	path := filepath.Join(e.opts.Workspace, e.st.EventsFile)
	if err := ralphdir.WriteFile(e.dir, path, buf); err != nil {
		return storageError(OpAppendLog, path, err)
	}
	if err := e.openLog(e.st.EventsFile, int64(len(buf))); err != nil {
		return err
	}
	e.st.Offset = int64(len(buf))
	e.moveOffsets(moved)
	return nil
}

// oldOffset is the offset of the i-th event rewriteLog copies: the pending
// ones, then the undecided ones.
func (e *Engine) oldOffset(i int) int64 {
	if i < len(e.st.Pending) {
		return e.st.Pending[i].Offset
	}
	return e.st.Undecided[i-len(e.st.Pending)].Offset
}

// moveOffsets renames every offset the state and the running iteration
// hold; one that is not in moved (an event already handled) points nowhere.
func (e *Engine) moveOffsets(moved map[int64]int64) {
	move := func(offsets []int64) []int64 {
		out := make([]int64, 0, len(offsets))
		for _, o := range offsets {
			if n, ok := moved[o]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	for i := range e.st.Pending {
		e.st.Pending[i].Offset = moved[e.st.Pending[i].Offset]
	}
	for i := range e.st.Undecided {
		e.st.Undecided[i].Offset = moved[e.st.Undecided[i].Offset]
	}
	if r := e.st.Running; r != nil {
		r.Events = move(r.Events)
		r.Offset = e.st.Offset
	}
	e.iter.events = move(e.iter.events)
	e.st.LastMalformed = 0
}

package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/ralph-loop/ralph/internal/procgroup"
)

// A worker killed outright (SIGKILL, the OOM killer) takes its loops with
// it, and each loop its agent (both die with their parent), but not what
// the agent started: its background jobs and anything that left its group
// run on, reparented away, in a worktree the next worker replaces. So the
// worker records, beside a task's job files and before its loop starts,
// the mark (procgroup.Mark) that the loop's process group gives every
// process under it, and forgets it once the loop and its group are gone.
// A record left behind is a loop whose worker died: a worker stops what
// carries its mark when it starts, and again before it runs that task
// (Worker.stopLeftovers), which covers a worker that shares the directory
// and was already running. On Linux only: elsewhere the marked processes
// cannot be found (procgroup.StopMarked).

// loopRecordFile is the record's name in the task's job directory.
const loopRecordFile = "loop.json"

// loopRecord says which worker process started a task's loop, and the mark
// of the loop's process group.
type loopRecord struct {
	Mark procgroup.Mark `json:"mark"`
	// WorkerPID and WorkerStart (procgroup.StartTime) tell whether the
	// worker that started the loop still runs.
	WorkerPID   int    `json:"worker_pid"`
	WorkerStart string `json:"worker_start,omitempty"`
}

// jobsDir holds a task's job files, in a directory named by its id.
func jobsDir(checkouts string) string { return filepath.Join(checkouts, "jobs") }

// writeLoopRecord records mark, for the loop this worker process is about
// to start, in dir (the task's job directory).
func writeLoopRecord(dir string, mark procgroup.Mark) error {
	pid := os.Getpid()
	data, err := json.Marshal(loopRecord{Mark: mark, WorkerPID: pid, WorkerStart: procgroup.StartTime(pid)})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+loopRecordFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("record the loop's mark: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, loopRecordFile)); err != nil {
		return fmt.Errorf("record the loop's mark: %w", err)
	}
	return nil
}

// forgetLoop removes task id's loop record once its loop and process group
// are gone.
func (w *Worker) forgetLoop(id string) {
	_ = os.Remove(filepath.Join(jobsDir(w.opts.Checkouts.Dir), id, loopRecordFile))
}

// stopAllLeftovers stops what every loop recorded in this worker's
// directory left running when its worker died, all at once: each may wait
// out a grace.
func (w *Worker) stopAllLeftovers() {
	entries, err := os.ReadDir(jobsDir(w.opts.Checkouts.Dir))
	if err != nil {
		return // none yet
	}
	var wg sync.WaitGroup
	for _, e := range entries {
		if e.IsDir() {
			wg.Go(func() { w.stopLeftovers(e.Name()) })
		}
	}
	wg.Wait()
}

// stopLeftovers stops what the last loop of task id in this worker's
// directory left running, when the worker process that started it is gone.
// A worker that still runs (one sharing the directory, or this one) looks
// after its own loops.
func (w *Worker) stopLeftovers(id string) {
	path := filepath.Join(jobsDir(w.opts.Checkouts.Dir), id, loopRecordFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var rec loopRecord
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil {
		w.logf(slog.LevelWarn, []any{attrTask, id}, "task %s: the record of its last loop here (%s) cannot be read: %v; what that loop left running, if anything, is not stopped", id, path, err)
		return
	}
	if workerRuns(rec) {
		return
	}
	n, err := procgroup.StopMarked(rec.Mark, loopGrace)
	if n > 0 {
		w.logf(slog.LevelInfo, []any{attrTask, id}, "task %s: stopped %d process(es) that its loop left running here when worker process %d died", id, n, rec.WorkerPID)
	}
	if err != nil {
		w.logf(slog.LevelWarn, []any{attrTask, id}, "task %s: what its loop left running: %v", id, err)
		return
	}
	_ = os.Remove(path)
}

// workerRuns says the worker process that wrote rec still runs: the
// process of its pid started when it did. Where start times cannot be read
// (not Linux), only this worker is known to run.
func workerRuns(rec loopRecord) bool {
	if rec.WorkerStart == "" {
		return rec.WorkerPID == os.Getpid()
	}
	return procgroup.StartTime(rec.WorkerPID) == rec.WorkerStart
}

package autopilot

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// Status is what `ralph autopilot status` reports.
type Status struct {
	Running   bool   `json:"running"`
	PID       int    `json:"pid,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	Paused    bool   `json:"paused"`
	Source    string `json:"source,omitempty"`
	Parallel  int    `json:"parallel,omitempty"`
	MaxTasks  int    `json:"max_tasks,omitempty"`
	Started   int    `json:"started"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// Pending is how many ready tasks have not started; -1 when unknown.
	Pending    int          `json:"pending"`
	Active     []SlotStatus `json:"active"`
	MergeQueue []Merge      `json:"merge_queue"`
	// Merging is the merge under way, if any.
	Merging  *Merge    `json:"merging,omitempty"`
	Failures []Outcome `json:"failures,omitempty"`
	Ended    *Ending   `json:"ended,omitempty"`
}

// SlotStatus is one active slot, with what its loop is doing.
type SlotStatus struct {
	Slot      string `json:"slot"`
	Task      string `json:"task"`
	Title     string `json:"title,omitempty"`
	Worktree  string `json:"worktree"`
	Elapsed   string `json:"elapsed"`
	Hat       string `json:"hat,omitempty"`
	Iteration int    `json:"iteration"`
	Attempt   int    `json:"attempt"`
	// LoopRunning says whether a live loop holds the worktree's lock; for
	// a remote task, whether its log's last run has not ended.
	LoopRunning bool `json:"loop_running"`
	// Worker is the host of the worker that runs a remote task; "" for a
	// task run here.
	Worker string `json:"worker,omitempty"`
	// Waiting is the question the task's loop waits on a person to
	// answer, as the loop's own files say (`ralph status --json` of its
	// worktree says the same); AnswerWith is the command that answers it
	// from the repository's root.
	Waiting    *runfiles.Question `json:"waiting_for_human,omitempty"`
	AnswerWith string             `json:"answer_with,omitempty"`
}

// ErrNoAutopilot means the repository has no autopilot state.
var ErrNoAutopilot = hint.New(hint.NotFound, "no autopilot has run here")

// ReadStatus reads the autopilot's lock and state in repo, and each active
// loop's status, without changing anything.
func ReadStatus(repo string, now time.Time) (Status, error) {
	dir := runfiles.In(repo).Path()
	data, err := os.ReadFile(runfiles.Dir(dir).AutopilotState())
	if errors.Is(err, fs.ErrNotExist) {
		return Status{Pending: -1}, ErrNoAutopilot
	}
	if err != nil {
		return Status{Pending: -1}, err
	}
	st := newState()
	if err := json.Unmarshal(data, st); err != nil {
		return Status{Pending: -1}, err
	}
	s := Status{RunID: st.RunID, Paused: st.Paused, Source: st.Source, Parallel: st.Parallel, MaxTasks: st.MaxTasks,
		Started: st.StartedCount, Completed: len(st.Completed), Failed: len(st.Failed), Pending: -1,
		Active: []SlotStatus{}, MergeQueue: st.MergeQueue, Failures: st.Failed, Ended: st.Ended}
	if held, info := runfiles.LockHeld(runfiles.Dir(dir).AutopilotLock()); held {
		s.Running, s.PID = true, info.PID
	}
	for _, m := range st.MergeQueue {
		if m.Step != MergeQueued {
			s.Merging = &m
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.Active)) {
		s.Active = append(s.Active, slotStatus(repo, k, st.Active[k], now))
	}
	return s, nil
}

func slotStatus(repo, slot string, a Slot, now time.Time) SlotStatus {
	ss := SlotStatus{Slot: slot, Task: a.Task, Title: a.Title, Worktree: a.Worktree, Attempt: a.Attempt,
		Elapsed: now.Sub(a.StartedAt).Round(time.Second).String()}
	if info, err := ReadWorkerInfo(repo, a.Task); err == nil {
		ss.Worker = info.Worker
	}
	if mirror := RemoteEventsPath(repo, a.Task); fileExists(mirror) {
		// A remote loop's lock is on another machine: its log's copy is
		// all there is to go by. A run cut off by a worker that died
		// without a word looks running until the autopilot learns of it.
		if loop, err := runfiles.ReadLogProgress(mirror); err == nil {
			ss.Hat, ss.Iteration, ss.LoopRunning = loop.Hat, loop.Iteration, loop.Ended == ""
		}
		return ss
	}
	if loop, err := runfiles.ReadStatus(filepath.Join(repo, a.Worktree), 0, now); err == nil {
		ss.Hat, ss.Iteration, ss.LoopRunning = loop.Hat, loop.Iteration, loop.Running
		if q := loop.Waiting; q != nil {
			ss.Waiting, ss.AnswerWith = q, AnswerCommand(a.Task, q.ID)
		}
	}
	return ss
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// PendingIn counts the ready tasks not yet started in dir, of the source
// the config at configs (ralph.yml when empty) names; -1 when it cannot
// be known.
func PendingIn(ctx context.Context, dir string, configs []string) int {
	cfg, _, err := config.LoadIn(dir, configs, nil)
	if err != nil {
		return -1
	}
	source, err := tasks.Open(TaskSpec(cfg.Autopilot.Source), dir)
	if err != nil {
		return -1
	}
	n, err := CountPending(ctx, dir, source)
	if err != nil {
		return -1
	}
	return n
}

// TaskSpec is the tasks.Spec a config's autopilot.source describes.
func TaskSpec(s config.TaskSource) tasks.Spec {
	return tasks.Spec{Type: s.Type, Path: s.Path, List: s.List, Claim: s.Claim, Close: s.Close, Fail: s.Fail, Files: s.Files}
}

// CountPending counts the source's ready tasks that the autopilot's run in
// repo has not started, for status.
func CountPending(ctx context.Context, repo string, source tasks.Source) (int, error) {
	st := newState()
	if data, err := os.ReadFile(runfiles.In(repo).AutopilotState()); err == nil {
		_ = json.Unmarshal(data, st)
	}
	ready, err := source.Ready(ctx)
	if err != nil {
		return -1, err
	}
	n := 0
	for _, t := range ready {
		if st.Ended != nil || !st.Started(t.ID) {
			n++
		}
	}
	return n, nil
}

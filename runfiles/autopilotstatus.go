package runfiles

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
)

// AutopilotStatus is what `ralph autopilot status` reports.
type AutopilotStatus struct {
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
	MergeQueue []TaskMerge  `json:"merge_queue"`
	// Merging is the merge under way, if any.
	Merging *TaskMerge `json:"merging,omitempty"`
	// Reviews are the tasks delivered as pull requests that wait for a
	// person to merge them, each with its pull request.
	Reviews  []TaskReview     `json:"reviews,omitempty"`
	Failures []TaskOutcome    `json:"failures,omitempty"`
	Ended    *AutopilotEnding `json:"ended,omitempty"`
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
	Waiting    *Question `json:"waiting_for_human,omitempty"`
	AnswerWith string    `json:"answer_with,omitempty"`
}

// ErrNoAutopilot means the repository has no autopilot state.
var ErrNoAutopilot = hint.New(hint.NotFound, "no autopilot has run here")

// ReadAutopilotStatus reads the autopilot's lock and state in repo, and each active
// loop's status, without changing anything.
func ReadAutopilotStatus(repo string, now time.Time) (AutopilotStatus, error) {
	st, err := ReadAutopilotState(repo)
	if err != nil {
		return AutopilotStatus{Pending: -1}, err
	}
	s := AutopilotStatus{RunID: st.RunID, Paused: st.Paused, Source: st.Source, Parallel: st.Parallel, MaxTasks: st.MaxTasks,
		Started: st.StartedCount, Completed: len(st.Completed), Failed: len(st.Failed), Pending: -1,
		Active: []SlotStatus{}, MergeQueue: st.MergeQueue, Reviews: st.Reviews, Failures: st.Failed, Ended: st.Ended}
	if held, info := LockHeld(In(repo).AutopilotLock()); held {
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

func slotStatus(repo, slot string, a TaskSlot, now time.Time) SlotStatus {
	ss := SlotStatus{Slot: slot, Task: a.Task, Title: a.Title, Worktree: a.Worktree, Attempt: a.Attempt,
		Elapsed: now.Sub(a.StartedAt).Round(time.Second).String()}
	if info, err := ReadWorkerInfo(repo, a.Task); err == nil {
		ss.Worker = info.Worker
	}
	if mirror := In(repo).RemoteEvents(a.Task); fileExists(mirror) {
		// A remote loop's lock is on another machine: its log's copy is
		// all there is to go by. A run cut off by a worker that died
		// without a word looks running until the autopilot learns of it.
		if loop, err := ReadLogProgress(mirror); err == nil {
			ss.Hat, ss.Iteration, ss.LoopRunning = loop.Hat, loop.Iteration, loop.Ended == ""
		}
		return ss
	}
	if loop, err := ReadStatus(filepath.Join(repo, a.Worktree), 0, now); err == nil {
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

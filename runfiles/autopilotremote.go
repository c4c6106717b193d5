package runfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/tasks"
)

// A task run by a worker on another machine has no worktree here. The
// autopilot keeps what it learns of it in .ralph/tasks/<task>/:
//
//	events.jsonl   a copy of the task's loop's event lines, appended as
//	               they arrive; several runs one after another when a
//	               worker handed the task back and another went on
//	worker.json    the worker that runs, or last ran, the task
//
// Its presence is what makes a task remote to `ralph events --task` and
// `ralph autopilot status`.

// WorkerInfo is worker.json: who runs a remote task, for which autopilot
// run and attempt, and since when.
type WorkerInfo struct {
	Worker  string    `json:"worker"` // the worker's host name
	Run     string    `json:"run"`    // the autopilot's run id
	Attempt int       `json:"attempt"`
	Since   time.Time `json:"since"`
}

// ReadWorkerInfo reads task's worker.json in repo. A task no worker has
// run has none: the error then matches fs.ErrNotExist.
func ReadWorkerInfo(repo, task string) (WorkerInfo, error) {
	path := In(repo).Worker(task)
	data, err := os.ReadFile(path)
	if err != nil {
		return WorkerInfo{}, fmt.Errorf("read the worker of %s: %w", task, err)
	}
	var info WorkerInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return WorkerInfo{}, fmt.Errorf("read the worker of %s: %s: %w", task, path, err)
	}
	return info, nil
}

// WriteWorkerInfo writes task's worker.json in repo atomically, so a
// reader never sees half of it.
func WriteWorkerInfo(repo, task string, info WorkerInfo) error {
	path := In(repo).Worker(task)
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := ralphdir.WriteFileAtomic(In(repo).Path(), path, append(data, '\n')); err != nil {
		return fmt.Errorf("write the worker of %s: %w", task, err)
	}
	return nil
}

// NoTaskLogError says that a task has no loop log to read: neither a
// remote task's copy nor a log in its worktree.
type NoTaskLogError struct {
	Task string
	// Looked are the places looked in, in order.
	Looked []string
}

func (e *NoTaskLogError) Error() string {
	return fmt.Sprintf("no event log for task %s: looked for %s", e.Task, strings.Join(e.Looked, " and "))
}

func (e *NoTaskLogError) Kind() hint.Kind { return hint.NotFound }

// TaskLog finds the event log of task's loop, as the autopilot in repo
// ran it: its copy of a remote task's log when it has one (remote), or
// else the current log of the task's worktree. The worktree is where the
// autopilot's last task.assigned for the task put it, which holds even
// after the autopilot is gone or worktrees_dir changed, or else where the
// default worktrees_dir puts it.
func TaskLog(repo, task string) (path string, remote bool, err error) {
	if err := tasks.ValidID(task); err != nil {
		return "", false, err
	}
	mirror := In(repo).RemoteEvents(task)
	if fileExists(mirror) {
		return mirror, true, nil
	}
	worktree, err := taskWorktree(repo, task)
	if err != nil {
		return "", false, err
	}
	path, err = CurrentLog(worktree)
	if err == nil {
		return path, false, nil
	}
	if !errors.Is(err, ErrNoLog) && !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "", false, &NoTaskLogError{Task: task,
		Looked: []string{relativeTo(repo, mirror), "a loop's log in " + relativeTo(repo, filepath.Join(worktree, DirName))}}
}

// taskWorktree is task's worktree as the last task.assigned in repo's
// autopilot log names it, or in the default worktrees_dir.
func taskWorktree(repo, task string) (string, error) {
	worktree := filepath.Join(DefaultWorktreesDir, task)
	f, err := os.Open(In(repo).AutopilotEvents())
	if errors.Is(err, fs.ErrNotExist) {
		return filepath.Join(repo, worktree), nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	assigned := []byte(`"` + TopicTaskAssigned + `"`)
	err = events.Scan(f, func(r events.Record) error {
		if !bytes.Contains(r.Line, assigned) {
			return nil // most lines are not, and need no decoding
		}
		ev, err := events.ParseLine(r.Line)
		if p := DecodeAutopilotPayload(ev); err == nil && ev.Topic == TopicTaskAssigned && p.Task == task && p.Worktree != "" {
			worktree = p.Worktree
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", AutopilotEventsFile, err)
	}
	if filepath.IsAbs(worktree) {
		return worktree, nil
	}
	return filepath.Join(repo, worktree), nil
}

// relativeTo is path as seen from repo, for messages.
func relativeTo(repo, path string) string {
	if rel, err := filepath.Rel(repo, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// TaskGoesOn reports whether another loop may still append its run to
// task's remote log after one that was cut off: the autopilot in repo is
// running, not stopped, and still has the task in a slot, waiting for a
// worker to take it on. A follow of the log stops at a cut-off run only
// when this is false.
func TaskGoesOn(repo, task string) bool {
	dir := In(repo).Path()
	data, err := os.ReadFile(Dir(dir).AutopilotState())
	if err != nil {
		return false
	}
	st := NewAutopilotState()
	if json.Unmarshal(data, st) != nil || st.Ended != nil || st.SlotOf(task) == "" {
		return false
	}
	// An interrupted autopilot keeps its slots for its resume, and records
	// autopilot.stopped just before it lets go of its lock.
	if last := LastEvents(In(repo).AutopilotEvents(), 1); len(last) == 1 && last[0].Topic == TopicAutopilotStopped {
		return false
	}
	held, _ := LockHeld(In(repo).AutopilotLock())
	return held
}

// EventLog is the autopilot's event log in repo's .ralph/, which exists
// once an autopilot has run there; ErrNoAutopilot when none has.
func AutopilotEventLog(repo string) (string, error) {
	path := In(repo).AutopilotEvents()
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", noEventLog(path)
		}
		return "", err
	}
	return path, nil
}

// noEventLog is the missing event log at its path; it is ErrNoAutopilot.
type noEventLog string

func (e noEventLog) Error() string        { return "no autopilot event log: " + string(e) + " does not exist" }
func (e noEventLog) Is(target error) bool { return target == ErrNoAutopilot }
func (e noEventLog) Kind() hint.Kind      { return hint.NotFound }

package runfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	looked := strings.Join(e.Looked, " and ")
	if n := len(e.Looked); n > 2 {
		looked = strings.Join(e.Looked[:n-1], ", ") + " and " + e.Looked[n-1]
	}
	return fmt.Sprintf("no event log for task %s: looked for %s", e.Task, looked)
}

func (e *NoTaskLogError) Kind() hint.Kind { return hint.NotFound }

// TaskLog finds the event log of task's loop, as the autopilot in repo
// ran it: its copy of a remote task's log when it has one (remote), or
// else the current log of the task's worktree, or else, once the task is
// merged and its worktree gone, the log kept of it (see KeepTaskLog). The
// worktree is where the autopilot's last task.assigned for the task put
// it, which holds even after the autopilot is gone or worktrees_dir
// changed, or else where the default worktrees_dir puts it.
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
	// A worktree's live log comes first: a task of the same id may run
	// again after one that was merged.
	kept := In(repo).KeptEvents(task)
	if fileExists(kept) {
		return kept, false, nil
	}
	return "", false, &NoTaskLogError{Task: task,
		Looked: []string{relativeTo(repo, mirror), "a loop's log in " + relativeTo(repo, filepath.Join(worktree, DirName)),
			relativeTo(repo, kept)}}
}

// KeepTaskLog copies the logs of the loop runs in a task's worktree,
// oldest first, to .ralph/tasks/<task>/loop-events.jsonl in repo before
// the worktree is removed, so that `ralph events --task` still reads them
// after the merge; they stay until the user removes them. A worktree
// without logs (removed already, by a run cut off after that) leaves what
// was kept alone. The logs are the agent's workspace's: one that is a
// link is refused, not followed.
func KeepTaskLog(repo, task, worktree string) error {
	src := In(worktree).Path()
	logs, err := EventLogs(src)
	if err != nil || len(logs) == 0 {
		return err
	}
	root := In(repo).Path()
	kept := In(repo).KeptEvents(task)
	tmp := kept + ".tmp"
	out, err := ralphdir.OpenFile(root, tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, ralphdir.FileMode)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp) }()
	for _, path := range logs {
		if err := appendLog(out, src, path); err != nil {
			_ = out.Close()
			return err
		}
	}
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, kept)
}

// appendLog copies one log of the .ralph directory dir to out, ending its
// last line when a kill cut it short, so that the next log's first line
// starts a line of its own.
func appendLog(out io.Writer, dir, path string) error {
	in, err := ralphdir.OpenFile(dir, path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	ends := &lastByte{w: out}
	if _, err := io.Copy(ends, in); err != nil {
		return fmt.Errorf("copy %s: %w", path, err)
	}
	if ends.n > 0 && ends.last != '\n' {
		_, err = out.Write([]byte{'\n'})
	}
	return err
}

// lastByte is a writer that remembers the last byte written through it.
type lastByte struct {
	w    io.Writer
	n    int64
	last byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.n += int64(n)
		l.last = p[n-1]
	}
	return n, err
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

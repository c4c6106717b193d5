package runfiles

import (
	"path/filepath"
	"strconv"
)

// The autopilot's files, in the .ralph/ of the repository's checkout it
// runs in, beside a loop's. Package autopilot decides what they say; the
// readers and writers of them are here (autopilot*.go, control.go,
// progress.go).
const (
	AutopilotEventsFile = "autopilot-events.jsonl"
	AutopilotStateFile  = "autopilot-state.json"
	AutopilotLockFile   = "autopilot.lock"
	ProgressFile        = "progress.md"
	// ControlDir holds the pause, resume, stop and stop-now requests, one
	// empty file each.
	ControlDir = "autopilot-control"
	// TasksDir holds, in TasksDir/<task>/, what a task's loop reads and
	// writes outside its worktree: its objective, config overlay, trusted
	// commands, the agent the task names and output.
	TasksDir      = "autopilot"
	ObjectiveFile = "objective.md"
	OverlayFile   = "task.yml"
	OutputFile    = "loop.log"
	CommandsFile  = "commands.json"
	AgentFile     = "agent.json"
	// RemoteDir holds, in RemoteDir/<task>/, what the coordinator learns of
	// a task a worker on another machine runs: a copy of its loop's event
	// lines, the worker, and each attempt's dispatch and result. For a
	// task whose loop ran here, it holds KeptEventsFile once the task is
	// merged and its worktree removed.
	RemoteDir        = "tasks"
	RemoteEventsFile = "events.jsonl"
	WorkerFile       = "worker.json"
	// DefaultWorktreesDir is where tasks' worktrees are, relative to the
	// repository, when autopilot.worktrees_dir does not say (package
	// config's default, which a test of package autopilot holds equal).
	DefaultWorktreesDir = ".worktrees"
	// KeptEventsFile is the loop log of a task that ran here, kept when
	// its worktree goes: its runs' logs, oldest first.
	KeptEventsFile = "loop-events.jsonl"
)

// AutopilotEvents is the autopilot's event log.
func (d Dir) AutopilotEvents() string { return d.file(AutopilotEventsFile) }

// AutopilotState is the fold of the autopilot's log.
func (d Dir) AutopilotState() string { return d.file(AutopilotStateFile) }

// AutopilotLock is held while an autopilot runs.
func (d Dir) AutopilotLock() string { return d.file(AutopilotLockFile) }

// Progress is the autopilot's state for people.
func (d Dir) Progress() string { return d.file(ProgressFile) }

// Control is the directory of the autopilot's control requests.
func (d Dir) Control() string { return d.file(ControlDir) }

// Task is the directory of a task's loop's files outside its worktree.
func (d Dir) Task(id string) string { return d.file(TasksDir, id) }

// Remote is the directory of what the coordinator keeps of a remote task.
func (d Dir) Remote(id string) string { return d.file(RemoteDir, id) }

// RemoteEvents is the coordinator's copy of a remote task's event lines.
func (d Dir) RemoteEvents(id string) string { return d.file(RemoteDir, id, RemoteEventsFile) }

// KeptEvents is the loop log of a merged task that ran here, kept after
// its worktree was removed.
func (d Dir) KeptEvents(id string) string { return d.file(RemoteDir, id, KeptEventsFile) }

// Worker names the worker that runs, or last ran, a remote task.
func (d Dir) Worker(id string) string { return d.file(RemoteDir, id, WorkerFile) }

// Dispatch is what the coordinator sent for a remote task's attempt in
// run, written before the message.
func (d Dir) Dispatch(id, run string, attempt int) string {
	return filepath.Join(d.Remote(id), "dispatch-"+run+"-"+strconv.Itoa(attempt)+".json")
}

// Result is the result a worker published for a remote task's attempt.
func (d Dir) Result(id, run string, attempt int) string {
	return filepath.Join(d.Remote(id), "result-"+run+"-"+strconv.Itoa(attempt)+".json")
}

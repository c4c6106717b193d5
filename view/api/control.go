package api

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// Stop asks what runs in dir to stop, as `ralph stop` asks a loop and
// `ralph autopilot stop` an autopilot: before its next iteration (a
// loop), or once its running tasks have finished (an autopilot); with now,
// at once, resumable. It returns what the command line prints.
func Stop(dir string, now bool) (string, error) {
	if view.ShowsAutopilot(dir) {
		req := runfiles.ControlStop
		if now {
			req = runfiles.ControlStopNow
		}
		return RequestAutopilot(dir, req)
	}
	return StopLoop(dir, now)
}

// StopLoop is `ralph stop [--now]`.
func StopLoop(dir string, now bool) (string, error) {
	mode, when := runfiles.StopAtBoundary, "before its next iteration"
	if now {
		mode, when = runfiles.StopNow, "now"
	}
	info, err := runfiles.StopRunningIn(loopDir(dir), mode)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("asked run %s (pid %d) to stop %s", info.RunID, info.PID, when), nil
}

// Pause is `ralph autopilot pause`: the autopilot starts no new task.
func Pause(dir string) (string, error) { return RequestAutopilot(dir, runfiles.ControlPause) }

// Resume is `ralph autopilot resume`: it starts new tasks again.
func Resume(dir string) (string, error) { return RequestAutopilot(dir, runfiles.ControlResume) }

// RequestAutopilot hands a control request (runfiles.ControlPause, …) to
// the autopilot running in dir.
func RequestAutopilot(dir string, req runfiles.ControlRequest) (string, error) {
	info, err := runfiles.RequestRunningAutopilot(dir, req)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("asked autopilot %s (pid %d) to %s", info.RunID, info.PID, req), nil
}

// Answer is `ralph answer`: it answers the question the run in dir waits
// on (id "" for whichever it is), by whom (cli, api, mcp, …). A task
// names an autopilot's task whose loop asked it, "" the workspace's own.
func Answer(dir, task, id, text, by string) (string, error) {
	if task != "" {
		ws, err := TaskWorkspace(dir, task)
		if err != nil {
			return "", err
		}
		dir = ws
	}
	q, err := runfiles.PendingQuestion(dir)
	if err == nil && q == nil && task == "" {
		err = tasksWaiting(dir)
	}
	if err == nil {
		err = runfiles.Answer(dir, id, text, by)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("answered %s (%s); the run goes on with its next iteration", q.ID, q.Text), nil
}

// tasksWaiting is an error naming the autopilot tasks whose loops wait
// on a person, for an answer given in the repository's root without
// --task: the workspace's own loop asks nothing, its tasks' loops may.
// Nil when none waits.
func tasksWaiting(dir string) error {
	s, err := runfiles.ReadAutopilotStatus(dir, time.Now())
	if err != nil {
		return nil
	}
	var tasks, fixes []string
	for _, slot := range s.Active {
		if q := slot.Waiting; q != nil {
			tasks = append(tasks, fmt.Sprintf("%s (%s: %s)", slot.Task, q.ID, view.Sanitize(q.Text)))
			fixes = append(fixes, "answer "+slot.Task+"'s with `"+slot.AnswerWith+"`")
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	return &hint.Error{Err: fmt.Errorf("no question waits in this workspace's own loop; the autopilot's tasks wait on: %s", strings.Join(tasks, ", ")),
		Fix: strings.Join(fixes, "\n")}
}

// TaskWorkspace is the worktree where the autopilot in dir runs task.
func TaskWorkspace(dir, task string) (string, error) {
	s, err := runfiles.ReadAutopilotStatus(dir, time.Now())
	if err != nil {
		return "", err
	}
	for _, slot := range s.Active {
		switch {
		case slot.Task != task && slot.Slot != task:
			continue
		case slot.Worker != "":
			return "", &hint.Error{Err: fmt.Errorf("task %s runs on worker %s", slot.Task, slot.Worker), Fix: "answer it there, with `ralph answer` in the task's worktree"}
		case filepath.IsAbs(slot.Worktree):
			return slot.Worktree, nil
		default:
			return filepath.Join(dir, slot.Worktree), nil
		}
	}
	return "", &hint.Error{Err: fmt.Errorf("no slot of the autopilot in %s runs task %s", dir, task), Fix: "`ralph autopilot status` lists the tasks in slots"}
}

package autopilot

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
)

// A task run by a worker on another machine has, beside the autopilot's
// files, .ralph/tasks/<task-id>/: the coordinator's copy of its loop's
// events and the worker that runs it.
const (
	RalphDir         = ralphDir
	RemoteDir        = "tasks"
	RemoteEventsFile = "events.jsonl"
	WorkerFile       = "worker.json"
)

// WorkerInfo names the worker that runs, or last ran, a task.
type WorkerInfo struct {
	Worker  string    `json:"worker"`
	Run     string    `json:"run"`
	Attempt int       `json:"attempt"`
	Since   time.Time `json:"since"`
}

// WriteWorkerInfo records which worker runs task in repo's autopilot.
func WriteWorkerInfo(repo, task string, info WorkerInfo) error {
	data, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return renameio.WriteFile(filepath.Join(repo, ralphDir, RemoteDir, task, WorkerFile), append(data, '\n'), 0o644)
}

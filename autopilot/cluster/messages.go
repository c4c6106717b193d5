package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/jsonkeys"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// Task is what the coordinator sends a worker: everything it needs to run
// the task's loop, but no credentials; the worker uses its own.
type Task struct {
	// Run is the coordinator's autopilot run the task belongs to. With ID
	// and Attempt it names the message, so a task run again in a later
	// autopilot run is a new message, not a duplicate of the earlier one.
	Run string `json:"run"`
	// ID names the task; tasks.ValidID accepts it.
	ID string `json:"id"`
	// Attempt counts the coordinator's attempts at the task from 1. A retry
	// (after a conflict, say) is a new attempt, and a new message; a
	// redelivery of the same message to another worker is not.
	Attempt int `json:"attempt"`
	// Objective is the loop's objective (-P).
	Objective string `json:"objective"`
	// RepoURL is the shared remote the worker fetches from and pushes
	// ralph/<task-id> to.
	RepoURL string `json:"repo_url"`
	// BaseCommit is the commit the task's work starts from.
	BaseCommit string `json:"base_commit"`
	// MergeCommit, when set, is merged into the task's work before its
	// loop starts, conflicts left for the loop to resolve: the base branch
	// as it is now, for a retry after a conflict. It travels as a commit
	// to merge, never as a commit of conflict markers.
	MergeCommit string `json:"merge_commit,omitempty"`
	// Configs are the loop's config files, later over earlier, as the
	// coordinator's loops get them with -c. The worker validates them as a
	// local config is validated.
	Configs []ConfigFile `json:"configs"`
	// TaskCommands are the task's own acceptance commands, which the
	// coordinator trusts (autopilot.trust_task_commands). A worker runs
	// them as acceptance criteria only if its own flags trust them too.
	TaskCommands []TaskCommand `json:"task_commands,omitempty"`
	// EventsOffset is where the coordinator's copy of the task's events
	// ended when it sent the task: the loop's lines are sent from there on.
	EventsOffset int64 `json:"events_offset,omitempty"`
	// Workers are the public keys of the workers whose event batches the
	// coordinator takes. A worker that continues another's attempt goes
	// on from the end of the last batch in RALPH_EVENTS only if one of
	// them signed it: anyone who may publish could send a batch of their
	// own there.
	Workers []string `json:"workers,omitempty"`
	// Coordinator names the coordinator's host, for the worker's logs.
	Coordinator string `json:"coordinator,omitempty"`
	// Backend and Model are the agent the task names for its loop ("":
	// the configs'), which the worker lays over the task's configs and its
	// own (`ralph loop --backend`, --model). A worker checks them as the
	// coordinator did (autopilot.CheckAgent): a name ralph does not know,
	// or a model that could be read as a flag, fails the task.
	Backend string `json:"backend,omitempty"`
	Model   string `json:"model,omitempty"`
}

// Agent is the agent t names.
func (t Task) Agent() autopilot.Agent { return autopilot.Agent{Backend: t.Backend, Model: t.Model} }

// legacyKeys are the keys of the messages of a ralph before the autopilot
// spelled its JSON as the loop does (snake_case). Messages are read with
// either spelling, so what an earlier coordinator or worker left in the
// streams is read after an upgrade; an earlier ralph cannot read today's,
// so a cluster runs one version (see the package doc).
var legacyKeys = map[string]string{
	"repoUrl":      "repo_url",
	"baseCommit":   "base_commit",
	"mergeCommit":  "merge_commit",
	"taskCommands": "task_commands",
	"eventsOffset": "events_offset",
	"taskId":       "task_id",
	"exitCode":     "exit_code",
}

// unmarshalLegacy decodes data into v (a pointer to a type without an
// UnmarshalJSON of its own), its keys spelled either way.
func unmarshalLegacy(data []byte, v any) error {
	data, err := jsonkeys.Rename(data, legacyKeys)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// UnmarshalJSON reads a task, also one an earlier coordinator wrote.
func (t *Task) UnmarshalJSON(data []byte) error {
	type plain Task
	return unmarshalLegacy(data, (*plain)(t))
}

// UnmarshalJSON reads a result, also one an earlier worker wrote.
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	return unmarshalLegacy(data, (*plain)(r))
}

// UnmarshalJSON reads a batch of events, also one an earlier worker wrote.
func (e *Events) UnmarshalJSON(data []byte) error {
	type plain Events
	return unmarshalLegacy(data, (*plain)(e))
}

// ConfigFile is one config file of a task's loop.
type ConfigFile struct {
	// Name is the file's name as the coordinator knows it (ralph.yml), for
	// messages; its extension says whether it is JSON.
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// TaskCommand is an acceptance command of the task itself.
type TaskCommand struct {
	// Name is the criterion's text in the task.
	Name    string `json:"name,omitempty"`
	Command string `json:"command"`
}

// Validate says what is wrong with t, naming each field, or nil.
func (t Task) Validate() error {
	var errs []error
	if err := validRun(t.Run); err != nil {
		errs = append(errs, err)
	}
	if err := tasks.ValidID(t.ID); err != nil {
		errs = append(errs, fmt.Errorf("id: %w", err))
	}
	if t.Attempt < 1 {
		errs = append(errs, fmt.Errorf("attempt: %d; attempts count from 1", t.Attempt))
	}
	if t.Objective == "" {
		errs = append(errs, errors.New("objective: empty"))
	}
	if t.RepoURL == "" {
		errs = append(errs, errors.New("repo_url: empty; a worker needs the repository to fetch from"))
	}
	if err := validCommit(t.BaseCommit); err != nil {
		errs = append(errs, fmt.Errorf("base_commit: %w", err))
	}
	if t.MergeCommit != "" {
		if err := validCommit(t.MergeCommit); err != nil {
			errs = append(errs, fmt.Errorf("merge_commit: %w", err))
		}
	}
	if len(t.Configs) == 0 {
		errs = append(errs, errors.New("configs: none; a loop needs its config"))
	}
	for i, c := range t.Configs {
		if c.Name == "" || strings.ContainsAny(c.Name, `/\`) || c.Name == "." || c.Name == ".." {
			errs = append(errs, fmt.Errorf("configs[%d].name: %q is not a file name", i, c.Name))
		}
	}
	for i, c := range t.TaskCommands {
		if strings.TrimSpace(c.Command) == "" {
			errs = append(errs, fmt.Errorf("task_commands[%d].command: empty", i))
		}
	}
	if t.EventsOffset < 0 {
		errs = append(errs, fmt.Errorf("events_offset: %d is negative", t.EventsOffset))
	}
	if err := autopilot.CheckAgent(t.ID, t.Agent()); err != nil {
		errs = append(errs, fmt.Errorf("backend, model: %w", err))
	}
	return invalid("task", t.ID, errs)
}

// Result is what became of one attempt at a task on a worker.
type Result struct {
	Run     string `json:"run"`
	TaskID  string `json:"task_id"`
	Attempt int    `json:"attempt"`
	// Worker names the worker's host.
	Worker string `json:"worker"`
	// Branch and Head are the branch the worker pushed (ralph/<task-id>)
	// and its commit; both empty when it pushed nothing.
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	// ExitCode, Reason and Message are how the loop ended, as a local
	// slot's (autopilot.LoopResult); a task the worker refused has the
	// reason for it in Message.
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	// Refused says the worker would not run the task for a reason of its
	// own (a repository outside its allow list, a clone it cannot make)
	// and handed it back for another worker: a report, not how the task
	// ended. Message says why; Delivery is the delivery it refused.
	Refused  bool `json:"refused,omitempty"`
	Delivery int  `json:"delivery,omitempty"`
	// Cost is what the task's loop cost on the worker, for the autopilot's
	// per-task totals.
	Cost runfiles.CostTotal `json:"cost,omitzero"`
}

// Validate says what is wrong with r, naming each field, or nil.
func (r Result) Validate() error {
	var errs []error
	if err := validRun(r.Run); err != nil {
		errs = append(errs, err)
	}
	if err := tasks.ValidID(r.TaskID); err != nil {
		errs = append(errs, fmt.Errorf("task_id: %w", err))
	}
	if r.Attempt < 1 {
		errs = append(errs, fmt.Errorf("attempt: %d; attempts count from 1", r.Attempt))
	}
	if r.Worker == "" {
		errs = append(errs, errors.New("worker: empty"))
	}
	switch {
	case r.Branch != "" && r.Head == "":
		errs = append(errs, fmt.Errorf("head: empty, but branch %q was pushed", r.Branch))
	case r.Branch == "" && r.Head != "":
		errs = append(errs, fmt.Errorf("branch: empty, but head %q was given", r.Head))
	case r.Head != "":
		if err := validCommit(r.Head); err != nil {
			errs = append(errs, fmt.Errorf("head: %w", err))
		}
	}
	if r.Refused && (r.Delivery < 1 || r.Head != "") {
		errs = append(errs, fmt.Errorf("refused: a refusal names its delivery (%d) and pushes nothing", r.Delivery))
	}
	return invalid("result", r.TaskID, errs)
}

// Events is a batch of a task's loop's event lines, with the worker's
// secrets hidden, from byte Offset of the coordinator's copy of them
// (.ralph/tasks/<task>/events.jsonl) on: offsets are the copy's, not the
// worker's log's. The coordinator appends a batch to its copy when the
// copy is Offset bytes long and skips one it already has, so batches sent
// twice or out of order do no harm.
type Events struct {
	Run     string `json:"run"`
	TaskID  string `json:"task_id"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
	Offset  int64  `json:"offset"`
	// Lines are whole lines, each ending in '\n'. A batch must fit in a
	// NATS message (1 MB by default) with its envelope.
	Lines []byte `json:"lines"`
}

// Validate says what is wrong with e, naming each field, or nil.
func (e Events) Validate() error {
	var errs []error
	if err := validRun(e.Run); err != nil {
		errs = append(errs, err)
	}
	if err := tasks.ValidID(e.TaskID); err != nil {
		errs = append(errs, fmt.Errorf("task_id: %w", err))
	}
	if e.Attempt < 1 {
		errs = append(errs, fmt.Errorf("attempt: %d; attempts count from 1", e.Attempt))
	}
	if e.Worker == "" {
		errs = append(errs, errors.New("worker: empty"))
	}
	if e.Offset < 0 {
		errs = append(errs, fmt.Errorf("offset: %d is negative", e.Offset))
	}
	if len(e.Lines) == 0 || !bytes.HasSuffix(e.Lines, []byte("\n")) {
		errs = append(errs, errors.New("lines: a batch is one or more whole lines, each ending in a newline"))
	}
	return invalid("events", e.TaskID, errs)
}

// validCommit accepts a full SHA-1 or SHA-256 object name in lower-case
// hexadecimal.
func validCommit(c string) error {
	if c == "" {
		return errors.New("empty")
	}
	if len(c) != 40 && len(c) != 64 {
		return fmt.Errorf("%q is not a full commit hash (40 or 64 hexadecimal digits)", c)
	}
	for _, r := range c {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return fmt.Errorf("%q is not a full commit hash (40 or 64 hexadecimal digits)", c)
		}
	}
	return nil
}

func invalid(what, id string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	name := what
	if tasks.ValidID(id) == nil {
		name += " " + strconv.Quote(id)
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return fmt.Errorf("invalid %s: %s", name, strings.Join(msgs, "; "))
}

// validRun accepts an autopilot run id: a non-empty name without '/',
// which separates the parts of a message id.
func validRun(run string) error {
	if run == "" || strings.ContainsAny(run, "/ \t\n") {
		return fmt.Errorf("run: %q is not an autopilot run id", run)
	}
	return nil
}

// msgID is the Nats-Msg-Id of a task's or result's attempt in a run.
func msgID(run, id string, attempt int) string { return run + "/" + id + "/" + strconv.Itoa(attempt) }

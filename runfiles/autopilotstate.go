package runfiles

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/jsonkeys"
)

// AutopilotStateVersion is the version of autopilot-state.json's schema. Version 1
// was this shape with some keys in camelCase (legacyKeys); it is read and
// written back as the current version.
const AutopilotStateVersion = 2

// legacyKeys are the keys the autopilot's state and log were written with
// before version 2, which spells every key as the loop's files do.
var legacyKeys = map[string]string{
	"runId":        "run_id",
	"startedAt":    "started_at",
	"maxTasks":     "max_tasks",
	"startedCount": "started_count",
	"mergeQueue":   "merge_queue",
	"exitCode":     "exit_code",
	"heldBy":       "held_by",
}

// AutopilotState is what the autopilot knows about its run: the fold of its event
// log, written to autopilot-state.json after each event.
type AutopilotState struct {
	Version      int           `json:"version"`
	RunID        string        `json:"run_id"`
	StartedAt    time.Time     `json:"started_at"`
	Source       string        `json:"source"`
	MaxTasks     int           `json:"max_tasks"`
	Parallel     int           `json:"parallel"`
	StartedCount int           `json:"started_count"`
	Completed    []TaskOutcome `json:"completed"`
	Failed       []TaskOutcome `json:"failed"`
	// Sets are the --set assignments the run goes on with, in order:
	// an unfinished run started again lays the new ones over them.
	Sets []string `json:"sets,omitempty"`
	// Active maps a slot ("1", "2", …) to the task running in it.
	Active     map[string]TaskSlot `json:"active"`
	MergeQueue []TaskMerge         `json:"merge_queue"`
	// Retry are tasks whose merge conflicted, waiting for a slot to run
	// their loop again on the new base.
	Retry []TaskSlot `json:"retry,omitempty"`
	// Reviews are tasks delivered as pull requests that ralph follows
	// until a person merges or closes them (deliver: pr, close_on:
	// merged). They outlive the run that opened them: a new run follows
	// them on.
	Reviews []TaskReview `json:"reviews,omitempty"`
	Paused  bool         `json:"paused"`
	// Ended is set when the run is over; a new `ralph autopilot` then
	// starts a new run.
	Ended *AutopilotEnding `json:"ended,omitempty"`
	// Offset is how much of the event log the state folds.
	Offset int64 `json:"offset"`
}

// TaskOutcome is a task the run finished with, completed or failed.
type TaskOutcome struct {
	Task   string    `json:"task"`
	Title  string    `json:"title,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Commit string    `json:"commit,omitempty"`
	At     time.Time `json:"at"`
	// Unassigned marks a failure before any loop of the task ran
	// (task.assign_failed).
	Unassigned bool `json:"unassigned,omitempty"`
	// URL is the pull request the task was delivered as (deliver: pr).
	URL string `json:"url,omitempty"`
}

// FailureWord is how a failed outcome is named for people: "not started"
// for a task no loop of which ran, "failed" for one whose loop or merge
// failed.
func FailureWord(o TaskOutcome) string {
	if o.Unassigned {
		return "not started"
	}
	return "failed"
}

// TaskSlot is a task whose loop runs (or ran, until the autopilot learns how
// it ended) in a worktree.
type TaskSlot struct {
	Task       string    `json:"task"`
	Title      string    `json:"title,omitempty"`
	Worktree   string    `json:"worktree"`
	Branch     string    `json:"branch"`
	PID        int       `json:"pid,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	Attempt    int       `json:"attempt"`
	Components []string  `json:"components,omitempty"`
	// Question is the question the task's loop waits on a person to
	// answer (task.asked), until it no longer does (task.answered).
	Question *Question `json:"question,omitempty"`
	// Updates is the open pull request the task's delivery brings up to
	// date (its base moved and it conflicted), through its merge and, when
	// that conflicts, its loop's retry; nil for a first delivery.
	Updates *PullRequest `json:"updates,omitempty"`
}

// The steps of a merge.
const (
	MergeQueued  = "queued"  // waiting for its turn
	MergeRunning = "merging" // being merged and verified in a scratch worktree
	MergeDone    = "merged"  // verified; the base branch moves to Commit
	// MergePushed: verified and on the remote (deliver: push or pr); the
	// local base branch moves, or the pull request is opened, next.
	MergePushed = "pushed"
)

// TaskMerge is a finished task waiting for, or going through, the merge queue.
type TaskMerge struct {
	TaskSlot
	Step string `json:"step"`
	// Base is the base branch's commit the merge was made on: the local
	// branch's, which must still be there for the merge to land; with
	// deliver: pr, the remote's.
	Base string `json:"base,omitempty"`
	// Commit is the verified merge result the base branch moves to.
	Commit string `json:"commit,omitempty"`
	// Remote is the git remote the merge is delivered to (deliver: push
	// or pr); "" for a merge that only moves the local base branch.
	Remote string `json:"remote,omitempty"`
	// Lease is what the remote's branch (the base branch for push, the
	// task's branch for pr) held when the merge was made, "" for no such
	// branch: the push expects it there, so that it replaces nothing
	// pushed since.
	Lease string `json:"lease,omitempty"`
	// Verified names the verify checks the merged result passed.
	Verified []string `json:"verified,omitempty"`
}

// TaskReview is a task delivered as a pull request, waiting for a person
// to merge or close it.
type TaskReview struct {
	TaskSlot
	PR PullRequest `json:"pr"`
}

// PullRequest is a pull request (a merge request on GitLab) ralph opened.
type PullRequest struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Forge is the forge it is on (github, gitlab); "" in a state an
	// earlier ralph wrote, which is read as GitHub's.
	Forge string `json:"forge,omitempty"`
	// Head is the commit ralph pushed as its branch: a rebase expects it
	// there, and does not replace what a person pushed on top.
	Head     string    `json:"head"`
	OpenedAt time.Time `json:"opened_at"`
}

// Name is what people of its forge call it: "merge request !12" on
// GitLab, whose "#12" is an issue, "pull request #12" elsewhere.
func (p PullRequest) Name() string { return ChangeName(p.Forge, p.Number) }

// ChangeName is what people of forge call its change request number n.
func ChangeName(forge string, n int) string {
	if forge == "gitlab" {
		return fmt.Sprintf("merge request !%d", n)
	}
	return fmt.Sprintf("pull request #%d", n)
}

// AutopilotEnding says how the run ended.
type AutopilotEnding struct {
	At       time.Time `json:"at"`
	ExitCode int       `json:"exit_code"`
	Reason   string    `json:"reason"`
}

// UnmarshalJSON reads a state of this version or of version 1, whose
// camelCase keys it reads as today's: a run an earlier ralph left goes on.
func (s *AutopilotState) UnmarshalJSON(data []byte) error {
	data, err := jsonkeys.Rename(data, legacyKeys)
	if err != nil {
		return err
	}
	type plain AutopilotState
	if err := json.Unmarshal(data, (*plain)(s)); err != nil {
		return err
	}
	if s.Version == 1 {
		s.Version = AutopilotStateVersion
	}
	return nil
}

// NewAutopilotState is the state of an autopilot that has not begun.
func NewAutopilotState() *AutopilotState {
	return &AutopilotState{Version: AutopilotStateVersion, Active: map[string]TaskSlot{}, Completed: []TaskOutcome{}, Failed: []TaskOutcome{}, MergeQueue: []TaskMerge{}}
}

// AutopilotPayload is the payload of every autopilot event; each topic uses the
// fields it needs. Views decode it with DecodeAutopilotPayload.
type AutopilotPayload struct {
	RunID    string `json:"run_id,omitempty"`
	Source   string `json:"source,omitempty"`
	MaxTasks int    `json:"max_tasks,omitempty"`
	Parallel int    `json:"parallel,omitempty"`
	Task     string `json:"task,omitempty"`
	Title    string `json:"title,omitempty"`
	Slot     string `json:"slot,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// RunsOn names where the task's loop runs when that is not Worktree
	// (task.assigned): a worker of the cluster.
	RunsOn     string   `json:"runs_on,omitempty"`
	Branch     string   `json:"branch,omitempty"`
	PID        int      `json:"pid,omitempty"`
	Attempt    int      `json:"attempt,omitempty"`
	Components []string `json:"components,omitempty"`
	HeldBy     string   `json:"held_by,omitempty"`
	Base       string   `json:"base,omitempty"`
	Commit     string   `json:"commit,omitempty"`
	Files      []string `json:"files,omitempty"`
	// Checks is how many verify criteria a merged result passed.
	Checks    int    `json:"checks,omitempty"`
	Reason    string `json:"reason,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Completed int    `json:"completed,omitempty"`
	Failed    int    `json:"failed,omitempty"`
	Message   string `json:"message,omitempty"`
	// Requeued marks a merge.failed that sends the merge back to the
	// queue, to be made again.
	Requeued bool `json:"requeued,omitempty"`
	// Resumable marks an autopilot.stopped that left its run to be
	// resumed (an interrupt), rather than ending it.
	Resumable bool `json:"resumable,omitempty"`
	// Unclosed marks a task.completed whose task could not be closed in
	// the tracker: a later run retries the close, never the task.
	Unclosed bool `json:"unclosed,omitempty"`
	// Cost is what a finished task's loop cost (task.finished); nil when
	// its runner does not say (a remote worker's).
	Cost *CostTotal `json:"cost,omitempty"`
	// Sets are the run's --set assignments (autopilot.started).
	Sets []string `json:"sets,omitempty"`
	// Question is the question a task's loop waits on a person to answer
	// (task.asked), or no longer waits on (task.answered).
	Question *Question `json:"question,omitempty"`
	// Remote, Lease and Verified are a delivered merge's (merge.done,
	// merge.pushed): see TaskMerge.
	Remote   string   `json:"remote,omitempty"`
	Lease    string   `json:"lease,omitempty"`
	Verified []string `json:"verified,omitempty"`
	// Number and URL name a task's pull request (task.pr_opened,
	// task.pr_conflicted, and the task.completed or task.failed that
	// ends its review).
	Number int    `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	// Forge is the forge of that pull request (github, gitlab).
	Forge string `json:"forge,omitempty"`
}

// UnmarshalJSON reads a payload, also one an earlier ralph wrote with
// camelCase keys (legacyKeys).
func (p *AutopilotPayload) UnmarshalJSON(data []byte) error {
	data, err := jsonkeys.Rename(data, legacyKeys)
	if err != nil {
		return err
	}
	type plain AutopilotPayload
	return json.Unmarshal(data, (*plain)(p))
}

// Topics of the autopilot's events.
const (
	TopicAutopilotStarted  = "autopilot.started"
	TopicAutopilotPaused   = "autopilot.paused"
	TopicAutopilotResumed  = "autopilot.resumed"
	TopicAutopilotStopping = "autopilot.stopping"
	TopicAutopilotStopped  = "autopilot.stopped"
	TopicAutopilotNotice   = "autopilot.notice"
	TopicTaskAssigned      = "task.assigned"
	TopicTaskRunning       = "task.running"
	TopicTaskHeld          = "task.held"
	TopicTaskAsked         = "task.asked"
	TopicTaskAnswered      = "task.answered"
	TopicTaskFinished      = "task.finished"
	TopicTaskRetry         = "task.retry"
	TopicTaskCompleted     = "task.completed"
	TopicTaskClosed        = "task.closed"
	TopicTaskFailed        = "task.failed"
	// TopicTaskAssignFailed is a task that could not be started: no loop
	// of it ran (task.failed is a task whose loop, or merge, failed).
	TopicTaskAssignFailed = "task.assign_failed"
	TopicMergeStarted     = "merge.started"
	TopicMergeDone        = "merge.done"
	TopicMergeFailed      = "merge.failed"
	// TopicMergePushed is a verified merge pushed to the remote (deliver:
	// push: the base branch; pr: the task's branch).
	TopicMergePushed = "merge.pushed"
	// TopicTaskPROpened is a task's pull request opened (or found open):
	// the task waits for a person to merge it.
	TopicTaskPROpened = "task.pr_opened"
	// TopicTaskPRConflicted is an open pull request that no longer merges
	// onto its base: the task's merge is made again on the new base.
	TopicTaskPRConflicted = "task.pr_conflicted"
	TopicVerifyFailed     = "verify.failed"
	TopicAllDone          = "all.done"
)

// DecodeAutopilotPayload reads an autopilot event's payload; a payload that is not
// the autopilot's is empty.
func DecodeAutopilotPayload(ev events.Event) AutopilotPayload {
	var p AutopilotPayload
	_ = json.Unmarshal(ev.Payload, &p)
	return p
}

// Apply folds one event of the log into the state.
func (s *AutopilotState) Apply(ev events.Event) {
	p := DecodeAutopilotPayload(ev)
	switch ev.Topic {
	case TopicAutopilotStarted:
		if p.RunID != s.RunID || s.Ended != nil {
			// The pull requests an earlier run opened are still open:
			// the new run follows them.
			reviews := s.Reviews
			*s = *NewAutopilotState()
			s.RunID, s.StartedAt, s.MaxTasks, s.Parallel = p.RunID, ev.TS, p.MaxTasks, p.Parallel
			s.Reviews = reviews
		}
		s.Source, s.Sets = p.Source, p.Sets
	case TopicAutopilotPaused:
		s.Paused = true
	case TopicAutopilotResumed:
		s.Paused = false
	case TopicTaskAssigned:
		s.assign(ev, p)
	case TopicTaskRunning:
		if slot, ok := s.Active[p.Slot]; ok {
			slot.PID = p.PID
			s.Active[p.Slot] = slot
		}
	case TopicTaskAsked, TopicTaskAnswered:
		if slot, ok := s.Active[p.Slot]; ok && slot.Task == p.Task {
			slot.Question = nil
			if ev.Topic == TopicTaskAsked {
				slot.Question = p.Question
			}
			s.Active[p.Slot] = slot
		}
	case TopicTaskFinished:
		if slot, ok := s.Active[p.Slot]; ok {
			delete(s.Active, p.Slot)
			slot.Question = nil
			s.MergeQueue = append(s.MergeQueue, TaskMerge{TaskSlot: slot, Step: MergeQueued})
		}
	case TopicMergeStarted:
		s.updateMerge(p.Task, func(m *TaskMerge) { m.Step, m.Base, m.Commit = MergeRunning, p.Base, "" })
	case TopicMergeFailed:
		if p.Requeued {
			s.updateMerge(p.Task, func(m *TaskMerge) {
				m.Step, m.Base, m.Commit, m.Remote, m.Lease, m.Verified = MergeQueued, "", "", "", "", nil
			})
		}
	case TopicMergeDone:
		s.updateMerge(p.Task, func(m *TaskMerge) {
			m.Step, m.Base, m.Commit, m.Remote, m.Lease, m.Verified = MergeDone, p.Base, p.Commit, p.Remote, p.Lease, p.Verified
		})
	case TopicMergePushed:
		s.updateMerge(p.Task, func(m *TaskMerge) { m.Step = MergePushed })
	case TopicTaskPROpened:
		s.review(ev, p)
	case TopicTaskPRConflicted:
		s.reopenMerge(p)
	case TopicTaskRetry:
		if m := s.MergeOf(p.Task); m != nil {
			slot := m.TaskSlot
			slot.Attempt++
			s.Retry = append(s.Retry, slot)
		}
		s.dropMerge(p.Task)
	case TopicTaskCompleted:
		s.dropMerge(p.Task)
		s.dropActive(p.Task)
		s.dropReview(p.Task)
		s.Completed = append(s.Completed, TaskOutcome{Task: p.Task, Title: p.Title, Commit: p.Commit, URL: p.URL, At: ev.TS})
	case TopicTaskFailed, TopicTaskAssignFailed:
		s.dropMerge(p.Task)
		s.dropActive(p.Task)
		s.dropReview(p.Task)
		s.Failed = append(s.Failed, TaskOutcome{Task: p.Task, Title: p.Title, Reason: p.Reason, URL: p.URL, At: ev.TS,
			Unassigned: ev.Topic == TopicTaskAssignFailed})
	case TopicAutopilotStopped:
		if p.Resumable {
			return
		}
		code := 0
		if p.ExitCode != nil {
			code = *p.ExitCode
		}
		s.Ended = &AutopilotEnding{At: ev.TS, ExitCode: code, Reason: p.Reason}
	}
}

// assign puts a task in a slot: a new task counts as started, a retry of
// one already started does not.
func (s *AutopilotState) assign(ev events.Event, p AutopilotPayload) {
	if p.Attempt <= 1 && !s.Started(p.Task) {
		s.StartedCount++
	}
	s.dropMerge(p.Task)
	var updates *PullRequest
	if i := slices.IndexFunc(s.Retry, func(r TaskSlot) bool { return r.Task == p.Task }); i >= 0 {
		updates = s.Retry[i].Updates
	}
	s.Retry = slices.DeleteFunc(s.Retry, func(r TaskSlot) bool { return r.Task == p.Task })
	s.Active[p.Slot] = TaskSlot{Task: p.Task, Title: p.Title, Worktree: p.Worktree, Branch: p.Branch,
		StartedAt: ev.TS, Attempt: max(p.Attempt, 1), Components: p.Components, Updates: updates}
}

func (s *AutopilotState) updateMerge(task string, f func(*TaskMerge)) {
	for i := range s.MergeQueue {
		if s.MergeQueue[i].Task == task {
			f(&s.MergeQueue[i])
		}
	}
}

func (s *AutopilotState) dropMerge(task string) {
	s.MergeQueue = slices.DeleteFunc(s.MergeQueue, func(m TaskMerge) bool { return m.Task == task })
}

// review moves a task whose pull request is open from the merge queue to
// the reviews; a pull request brought up to date stays where it was, with
// its new head.
func (s *AutopilotState) review(ev events.Event, p AutopilotPayload) {
	pr := PullRequest{Number: p.Number, URL: p.URL, Forge: p.Forge, Head: p.Commit, OpenedAt: ev.TS}
	if r := s.ReviewOf(p.Task); r != nil {
		r.PR.Head = p.Commit
		return
	}
	slot := TaskSlot{Task: p.Task, Title: p.Title, Branch: "ralph/" + p.Task, StartedAt: ev.TS, Attempt: 1}
	if m := s.MergeOf(p.Task); m != nil {
		slot = m.TaskSlot
		if m.Updates != nil {
			pr.OpenedAt = m.Updates.OpenedAt
		}
	}
	slot.Question, slot.Updates = nil, nil
	s.dropMerge(p.Task)
	s.Reviews = append(s.Reviews, TaskReview{TaskSlot: slot, PR: pr})
}

// reopenMerge sends a task whose pull request conflicts back to the merge
// queue, to be merged again on its base's new tip and pushed over the
// pull request's head.
func (s *AutopilotState) reopenMerge(p AutopilotPayload) {
	found := s.ReviewOf(p.Task)
	if found == nil {
		return
	}
	r := *found // dropReview reuses the slice's array
	s.dropReview(p.Task)
	r.Updates = &r.PR
	s.MergeQueue = append(s.MergeQueue, TaskMerge{TaskSlot: r.TaskSlot, Step: MergeQueued})
}

func (s *AutopilotState) dropReview(task string) {
	s.Reviews = slices.DeleteFunc(s.Reviews, func(r TaskReview) bool { return r.Task == task })
}

// ReviewOf is task's open pull request that ralph follows, or nil.
func (s *AutopilotState) ReviewOf(task string) *TaskReview {
	for i := range s.Reviews {
		if s.Reviews[i].Task == task {
			return &s.Reviews[i]
		}
	}
	return nil
}

func (s *AutopilotState) dropActive(task string) {
	for k, slot := range s.Active {
		if slot.Task == task {
			delete(s.Active, k)
		}
	}
}

// Started reports whether the run has started task: it is running, waits
// for its merge or for a person to merge its pull request, or has
// finished. A task is never started twice in a run.
func (s *AutopilotState) Started(task string) bool {
	if s.SlotOf(task) != "" || s.MergeOf(task) != nil || s.retrying(task) || s.ReviewOf(task) != nil {
		return true
	}
	has := func(o TaskOutcome) bool { return o.Task == task }
	return slices.ContainsFunc(s.Completed, has) || slices.ContainsFunc(s.Failed, has)
}

// TitleOf is the title of a task that runs or waits to merge, or "".
func (s *AutopilotState) TitleOf(task string) string {
	if slot := s.SlotOf(task); slot != "" {
		return s.Active[slot].Title
	}
	if m := s.MergeOf(task); m != nil {
		return m.Title
	}
	if r := s.ReviewOf(task); r != nil {
		return r.Title
	}
	return ""
}

// SlotOf is the slot task runs in, or "".
func (s *AutopilotState) SlotOf(task string) string {
	for k, slot := range s.Active {
		if slot.Task == task {
			return k
		}
	}
	return ""
}

func (s *AutopilotState) retrying(task string) bool {
	return slices.ContainsFunc(s.Retry, func(r TaskSlot) bool { return r.Task == task })
}

// MergeOf is task's merge in the queue, or nil.
func (s *AutopilotState) MergeOf(task string) *TaskMerge {
	for i := range s.MergeQueue {
		if s.MergeQueue[i].Task == task {
			return &s.MergeQueue[i]
		}
	}
	return nil
}

// Idle reports whether nothing is running and nothing waits to merge.
func (s *AutopilotState) Idle() bool {
	return len(s.Active) == 0 && len(s.MergeQueue) == 0 && len(s.Retry) == 0
}

package runfiles

import (
	"encoding/json"
	"strings"

	"github.com/ralph-loop/ralph/events"
)

// Topics of ralph's own bookkeeping lines. They are never routed to hats,
// and an agent may not publish them.
const (
	TopicLoopStarted        = "loop.started"
	TopicLoopResumed        = "loop.resumed"
	TopicLoopTerminate      = "loop.terminate"
	TopicLoopRepaired       = "loop.repaired"
	TopicIterationStarted   = "iteration.started"
	TopicIterationFinished  = "iteration.finished"
	TopicIterationSettled   = "iteration.settled"
	TopicEventRouted        = "event.routed"
	TopicEventRejected      = "event.rejected"
	TopicEventDropped       = "event.dropped"
	TopicCompletionConfirm  = "completion.confirming"
	TopicRateLimited        = "agent.rate_limited"
	TopicCommit             = "git.commit"
	TopicCriteriaBaseline   = "criteria.baseline"
	TopicCompletionVerified = "completion.verified"
	TopicCriteriaIgnored    = "criteria.ignored"
	TopicTaskComplete       = "task.complete"
	TopicTaskResume         = "task.resume"
	TopicCompletionRejected = "completion.rejected"
	// A hook's lines (package hooks): written and read by the Hooks the
	// run was given, nothing for the fold.
	TopicHookStarted     = "hook.started"
	TopicHookRan         = "hook.ran"
	SuffixExhausted      = ".exhausted"
	SuffixScopeViolation = ".scope_violation"
	SuffixBlocked        = ".blocked"
)

// RejectReason is why an agent event was rejected, in event.rejected as
// "reason".
type RejectReason string

// Reasons to reject an agent event.
const (
	RejectReserved           RejectReason = "reserved"
	RejectInvalidTopic       RejectReason = "invalid_topic"
	RejectUnknownTarget      RejectReason = "unknown_target"
	RejectScope              RejectReason = "scope_violation"
	RejectRequiredEventsMiss RejectReason = "required_events_missing"
	RejectCriteriaFailed     RejectReason = "criteria_failed"
	RejectGateFailed         RejectReason = "gate_failed"
	RejectSuperseded         RejectReason = "superseded"
	RejectInvalidQuestion    RejectReason = "invalid_question"
	RejectCompletionClaimed  RejectReason = "completion_claimed"
)

// isBookkeeping reports whether topic is one of ralph's own lines that the
// fold interprets instead of routing.
func IsBookkeeping(topic string) bool {
	switch topic {
	case TopicLoopStarted, TopicLoopResumed, TopicLoopTerminate, TopicLoopRepaired,
		TopicIterationStarted, TopicIterationFinished, TopicIterationSettled,
		TopicEventRouted, TopicEventRejected, TopicEventDropped,
		TopicCompletionConfirm, TopicRateLimited, TopicCommit, TopicCriteriaBaseline, TopicCompletionVerified, TopicTaskComplete,
		TopicCriteriaIgnored, TopicHookStarted, TopicHookRan, TopicLoopPaced, TopicBackendSwitched,
		TopicWaveStarted, TopicWaveWorkerFinished, TopicWaveFinished:
		return true
	}
	return false
}

// isReservedForRalph reports whether an agent may not publish topic.
func ReservedForRalph(topic string) bool {
	return IsBookkeeping(topic) || topic == TopicTaskResume || topic == TopicHumanAnswered || topic == TopicHumanTimedOut ||
		strings.HasPrefix(topic, "loop.") || strings.HasPrefix(topic, "iteration.") ||
		strings.HasPrefix(topic, "event.") || strings.HasPrefix(topic, "hook.")
}

// Outcome is how an iteration ended, in iteration.finished.
type Outcome string

// Outcomes of an iteration.
const (
	OutcomeSuccess     Outcome = "success"
	OutcomeFailure     Outcome = "failure"
	OutcomeRateLimited Outcome = "rate_limited"
	OutcomeInterrupted Outcome = "interrupted"
	// OutcomeSwitched: the provider failed (credentials, an overloaded
	// service, a CLI that cannot run) and the iteration is repeated on the
	// next backend of its chain; not a failure of the work.
	OutcomeSwitched Outcome = "switched"
)

// Disposition is what accepting an agent event did with it, in
// event.routed as "as".
type Disposition string

// Dispositions of an accepted agent event.
const (
	AsRoute        Disposition = ""             // routed to hats
	AsClaim        Disposition = "claim"        // a completion claim that needs confirming
	AsCompletion   Disposition = "completion"   // completion accepted: the run is complete
	AsCancellation Disposition = "cancellation" // the cancellation topic: the run is cancelled
	AsQuestion     Disposition = "question"     // human.asked: the run waits for a person's answer
)

type LoopStartedRecord struct {
	RunID      string   `json:"run_id"`
	Objective  string   `json:"objective"`
	Source     string   `json:"objective_source,omitempty"`
	Config     string   `json:"config,omitempty"`
	Hats       []string `json:"hats"`
	Completion string   `json:"completion_promise"`
	MaxIter    int      `json:"max_iterations,omitempty"`
	// Head is the workspace's commit when the run started, for commit_made.
	Head   string  `json:"head,omitempty"`
	Launch *Launch `json:"launch,omitempty"`
}

type LoopResumedRecord struct {
	Iteration int     `json:"iteration"`
	MaxIter   int     `json:"max_iterations,omitempty"`
	Launch    *Launch `json:"launch,omitempty"`
	// Hats are the configured hats from here on: a run may be resumed with
	// an edited configuration, and `ralph emit --target` checks these.
	Hats []string `json:"hats"`
}

type IterationStartedRecord struct {
	Iteration  int     `json:"iteration"`
	Hat        string  `json:"hat"`
	Events     []int64 `json:"events"`
	Confirming bool    `json:"confirming,omitempty"`
	Backend    string  `json:"backend,omitempty"`
	// Sandbox is how the agent was confined ("landlock", "bwrap, network
	// deny", "off"); "" in a log from before ralph confined agents.
	Sandbox string `json:"sandbox,omitempty"`
	// DisallowedTools are the tools the agent's CLI was told to deny
	// (cli.disallowed_tools and the hat's).
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// Attempt is, for an iteration started again after an interruption
	// or a rate limit, the how-many-th start it is (2, 3, …); absent for
	// the first. It names the attempt's files (Prompt, RawOutput).
	Attempt int `json:"attempt,omitempty"`
	// Prompt is the file, in the run's directory, that keeps the prompt
	// the agent was given, with secret values hidden; PromptBytes and
	// PromptSHA256 are that file's size and hash, so a reader can tell it
	// is the one the log speaks of. "" in a log from before ralph kept
	// prompts, or when it could not write the file.
	Prompt       string `json:"prompt,omitempty"`
	PromptBytes  int    `json:"prompt_bytes,omitempty"`
	PromptSHA256 string `json:"prompt_sha256,omitempty"`
}

type IterationFinishedRecord struct {
	Iteration  int                `json:"iteration"`
	Hat        string             `json:"hat"`
	Outcome    Outcome            `json:"outcome"`
	ExitCode   int                `json:"exit_code"`
	Failure    events.FailureKind `json:"failure,omitempty"`
	Message    string             `json:"message,omitempty"`
	DurationMS int64              `json:"duration_ms"`
	Usage      events.Usage       `json:"tokens"`
	CostUSD    float64            `json:"cost_usd"`
	// CostSource says how CostUSD is known; "" (a log from before ralph
	// priced iterations) reads as reported.
	CostSource CostSource        `json:"cost_source,omitempty"`
	Model      string            `json:"model"`
	Tools      events.ToolCounts `json:"tools"`
	Confirming bool              `json:"confirming,omitempty"`
	// Said is the end of the agent's final message, for the next prompt.
	Said string `json:"said,omitempty"`
	// Changed says the iteration changed tracked or untracked files.
	Changed bool `json:"changed,omitempty"`
	Commits int  `json:"commits,omitempty"`
	// TasksDone counts the SPEC boxes the iteration checked.
	TasksDone int `json:"tasks_done,omitempty"`
	// Trees is the workspace before and after the iteration, as git
	// sees it; nil in a log from before ralph recorded them.
	Trees *TreesRecord `json:"trees,omitempty"`
	// WaveID is set when the iteration ran a wave: Usage and CostUSD are
	// then its workers' sums, which their wave.worker_finished lines
	// counted already.
	WaveID string `json:"wave_id,omitempty"`
}

// TreesRecord is what an iteration changed in the workspace: HEAD before
// and after (its commits lie between), and the tree of the workspace's
// files, committed or not, before and after (git.Repo.WorkTree).
type TreesRecord struct {
	HeadBefore string `json:"head_before,omitempty"`
	HeadAfter  string `json:"head_after,omitempty"`
	Before     string `json:"before,omitempty"`
	After      string `json:"after,omitempty"`
	// Unavailable says why the trees were not recorded: the workspace is
	// not a git repository, or git failed.
	Unavailable string `json:"unavailable,omitempty"`
}

type IterationSettledRecord struct {
	Iteration int    `json:"iteration"`
	Note      string `json:"note,omitempty"`
	// Progress: the iteration had an event accepted, changed a file or
	// made a commit. Iterations without it in a row mean the run is stuck.
	Progress bool `json:"progress"`
}

type RoutedRecord struct {
	Offset int64       `json:"offset"`
	Topic  string      `json:"topic"`
	To     []string    `json:"to"`
	As     Disposition `json:"as,omitempty"`
	// TimeoutMS is, for a question, how long the run waits for the
	// answer from the question's own time; 0 waits until answered.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

type RejectedRecord struct {
	Offset int64        `json:"offset"`
	Topic  string       `json:"topic"`
	Reason RejectReason `json:"reason"`
	Detail string       `json:"detail,omitempty"`
}

type DroppedRecord struct {
	Offsets []int64 `json:"offsets"`
	Hat     string  `json:"hat"`
	Reason  string  `json:"reason"`
}

// RepairedRecord notes that the line at Offset was cut off by a crash in the
// middle of a write and has been closed with a newline.
type RepairedRecord struct {
	Offset int64 `json:"offset"`
	Bytes  int64 `json:"bytes"`
}

type ConfirmingRecord struct {
	Claim string `json:"claim"`
}

type TerminateRecord struct {
	Reason     Reason  `json:"reason"`
	ExitCode   int     `json:"exit_code"`
	Message    string  `json:"message,omitempty"`
	Cause      Cause   `json:"cause,omitempty"`
	GoOn       *GoOn   `json:"go_on,omitempty"`
	Iterations int     `json:"iterations"`
	CostUSD    float64 `json:"cost_usd"`
	// CostSource and CostUnknown say how CostUSD is known (CostTotal).
	CostSource  CostSource `json:"cost_source,omitempty"`
	CostUnknown bool       `json:"cost_unknown,omitempty"`
	Tokens      int64      `json:"tokens"`
	RuntimeMS   int64      `json:"runtime_ms"`
}

type CommitRecord struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	Hash      string `json:"hash"`
	Subject   string `json:"subject"`
}

type RateLimitedRecord struct {
	Iteration int    `json:"iteration"`
	Hat       string `json:"hat"`
	// Backend is the backend that was limited; "" in a log from before
	// fallback chains.
	Backend string `json:"backend,omitempty"`
	Message string `json:"message,omitempty"`
	ResetAt string `json:"reset_at,omitempty"`
	WaitMS  int64  `json:"wait_ms"`
}

// RalphEvent builds one of ralph's own lines.
func RalphEvent(topic string, payload any) events.Event {
	var raw json.RawMessage
	switch p := payload.(type) {
	case nil:
		raw = json.RawMessage("null")
	case string:
		raw = events.StringPayload(p)
	default:
		raw = events.ObjectPayload(p)
	}
	return events.Event{Topic: topic, Payload: raw, Source: events.SourceRalph}
}

// decode reads a bookkeeping payload; a payload that does not decode leaves v
// at its zero value, because a damaged line must not stop a resume.
func Decode(ev events.Event, v any) bool {
	return json.Unmarshal(ev.Payload, v) == nil
}

type BaselineRecord struct {
	Results []BaselineResult `json:"results"`
}

type BaselineResult struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
}

type VerifiedRecord struct {
	Iteration int `json:"iteration"`
	// By says what ralph checked: VerifiedBySpec or VerifiedByCriteria.
	By string `json:"by,omitempty"`
}

// What completed a run that no agent claimed complete, for
// RunState.CompletedBy.
const (
	VerifiedBySpec     = "spec"
	VerifiedByCriteria = "acceptance_criteria"
)

// IgnoredRecord names the criteria still failing when a completion was
// accepted, because they failed before the run too (baseline: ignore).
type IgnoredRecord struct {
	Criteria []string `json:"criteria"`
}

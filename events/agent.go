package events

import (
	"io"
	"time"
)

// This file holds the vocabulary shared by backends (which produce it) and the
// engine (which consumes it), so neither has to import the other.

// ActivityKind says what an Activity reports.
type ActivityKind string

const (
	ActivityText      ActivityKind = "text"       // assistant text
	ActivityTool      ActivityKind = "tool"       // a tool use
	ActivityUsage     ActivityKind = "usage"      // token usage or cost became known
	ActivityRateLimit ActivityKind = "rate_limit" // the provider refused for a rate or usage limit
	ActivityError     ActivityKind = "error"      // the agent reported an error
	// ActivityWarning is ralph's own notice about the run, such as a
	// prompt too long for a command-line argument going elsewhere.
	ActivityWarning ActivityKind = "warning"
)

// ToolKind classifies a tool use.
type ToolKind string

const (
	ToolRead  ToolKind = "read"
	ToolWrite ToolKind = "write"
	ToolShell ToolKind = "shell"
	ToolOther ToolKind = "other"
)

// Activity is one normalized thing an agent did while it ran, streamed to
// the engine as it happens.
type Activity struct {
	Kind     ActivityKind
	Text     string    // assistant text (ActivityText), error message (ActivityError) or warning (ActivityWarning)
	Tool     ToolKind  // ActivityTool
	ToolName string    // the CLI's own tool name, e.g. "Bash"
	Path     string    // file path of a read or write, when known
	Command  string    // shell command, when known
	Usage    Usage     // ActivityUsage
	CostUSD  float64   // ActivityUsage, when the CLI reports cost
	ResetAt  time.Time // ActivityRateLimit: when the limit lifts, zero if unknown
}

// Usage counts tokens. InputTokens are the input tokens not read from or
// written to a cache: every backend moves the cached part of a CLI's input
// figure to CacheReadTokens (and CacheWriteTokens), so one price formula
// fits every agent.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Total is input plus output tokens, the figure budgets are counted in.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
	}
}

// ToolCounts counts tool uses by kind.
type ToolCounts struct {
	Read  int `json:"read"`
	Write int `json:"write"`
	Shell int `json:"shell"`
	Other int `json:"other,omitempty"`
}

// Count adds one use of kind k.
func (c *ToolCounts) Count(k ToolKind) {
	switch k {
	case ToolRead:
		c.Read++
	case ToolWrite:
		c.Write++
	case ToolShell:
		c.Shell++
	default:
		c.Other++
	}
}

// AgentRun is what a backend needs to run one agent process for one prompt.
type AgentRun struct {
	Prompt string
	Dir    string   // the workspace; the agent's working directory
	Env    []string // KEY=VALUE added to ralph's own environment
	// RawOutput receives the agent's stdout and stderr, line by line and
	// otherwise unchanged but for the secret values the backend is told to
	// redact, for .ralph/runs/<run-id>/iter-NNNN.jsonl. May be nil.
	RawOutput io.Writer
	// Timeout bounds the whole run, IdleTimeout the time without any output.
	// Zero means no limit.
	Timeout     time.Duration
	IdleTimeout time.Duration
	// ForceKill, when closed, kills the agent's process group at once
	// instead of waiting out the grace period after SIGTERM (a second
	// Ctrl-C). May be nil.
	ForceKill <-chan struct{}
	// Started, when set, is called with the agent's process id, which is
	// also its process group id, as soon as it runs. ralph records it so a
	// ralph that was killed outright can stop the orphaned agent on resume.
	Started func(pid int)
}

// FailureKind is why an agent run failed, in iteration.finished as
// "failure".
type FailureKind string

// Failure kinds of an AgentResult.
const (
	FailureNone      FailureKind = ""
	FailureExit      FailureKind = "exit"       // non-zero exit status
	FailureAgent     FailureKind = "agent"      // the agent reported an error (API error, is_error, …)
	FailureTimeout   FailureKind = "timeout"    // the iteration time limit
	FailureIdle      FailureKind = "idle"       // no output for the idle time limit
	FailureAuth      FailureKind = "auth"       // missing or expired credentials: fatal, never retried
	FailureRateLimit FailureKind = "rate_limit" // a rate or usage limit: wait and repeat, not a failure
	// FailureProvider is the provider failing, not the work: its service
	// overloaded after the CLI's own retries, or the CLI could not be
	// run. Another backend may well succeed with the same prompt.
	FailureProvider FailureKind = "provider"
)

// AgentResult is the verdict on one agent run.
type AgentResult struct {
	ExitCode  int
	Duration  time.Duration
	FinalText string // where <event> tags are searched for
	Usage     Usage
	CostUSD   float64 // what the CLI itself says the run cost; 0 when it does not say
	// Model is the model the agent's own output names (the one that did
	// most of the work when it names several), "" when it names none: the
	// engine then prices the run by the configured model.
	Model string
	// Requests counts the premium requests a CLI billed by the request
	// (GitHub Copilot) used; 0 for the others.
	Requests int
	Tools    ToolCounts
	// Failure is one of the Failure* kinds; FailureNone means success.
	Failure FailureKind
	// FailureMessage explains the failure in a line.
	FailureMessage string
	// RateLimitResetAt is when a rate limit lifts, zero if the provider did
	// not say. Set only with FailureRateLimit.
	RateLimitResetAt time.Time
}

// ProviderFault reports whether the run failed for the provider's sake, not
// the work's: credentials, a service that is down, a CLI that cannot run.
// The same prompt may succeed on another backend.
func (r AgentResult) ProviderFault() bool {
	return r.Failure == FailureAuth || r.Failure == FailureProvider
}

// Failed reports whether the run counts as a failed iteration. A rate limit
// does not: the iteration is repeated after the wait.
func (r AgentResult) Failed() bool {
	return r.Failure != FailureNone && r.Failure != FailureRateLimit
}

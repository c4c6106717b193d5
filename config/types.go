package config

import (
	"cmp"
	"time"

	"github.com/ralph-loop/ralph/criteria"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/pricing"
)

// Config is a loaded ralph.yml (or ralph.json), defaults applied.
//
// The yaml tags name the keys of the file; decoding does not use them (see
// decode.go, which reads yaml.Node so that every problem has a line), but a
// test keeps them and the decoder's key tables in step.
type Config struct {
	EventLoop EventLoop
	CLI       CLI
	// Hats in the order they appear in the file (with several files, the
	// first file's hats first, then hats only later files add).
	Hats []Hat
	// AcceptanceCriteria must all pass for a completion claim to count.
	AcceptanceCriteria []criteria.Spec
	// Gates apply to events of every hat; a hat's own gates come first.
	Gates    []Gate
	Memories Memories
	// Human says how a run waits for a person to answer an agent's question.
	Human Human
	// Redact names environment variables whose values ralph hides in
	// everything it writes, beyond those whose names already look secret
	// (*KEY*, *TOKEN*, *SECRET*, *PASSWORD*).
	Redact []string
	// Autopilot says how `ralph autopilot` works through a task tracker.
	Autopilot Autopilot
	// Sandbox is the top-level sandbox: section, as written; LoopSandbox,
	// SlotSandbox and HatSandbox say what applies.
	Sandbox Sandbox
	// Hooks run on the events of a loop's or the autopilot's log.
	Hooks []Hook
	// Pricing adds or replaces models of the embedded price table
	// (pricing.Default().With(Pricing)), in file order; each Source is
	// "config FILE:LINE".
	Pricing []pricing.Price
	// Chains are the named chains of loops (`ralph chain run NAME`), in
	// file order.
	Chains []Chain
	// Path is the file the config came from (the last, when merged).
	Path string
	// Warnings are things a user should know but that do not stop a run,
	// such as keys ralph accepts without implementing.
	Warnings []string

	// layered is the merged tree it was decoded from, for Explain.
	layered layered

	// autopilotSection says the config has an autopilot: section.
	autopilotSection bool
	// pathCriteria are the criteria that read a file, where each was
	// written, for CriteriaProblems.
	pathCriteria []placedCriterion

	// promptSource says where event_loop.prompt was set, for Objective.
	promptSource string
	// promptFileAt is where event_loop.prompt_file was set (zero when it is
	// the default), for the "not found" problem.
	promptFileAt pos
	// promptDir is the directory of the file that set event_loop.prompt_file
	// (or of Path when it was not set): a relative prompt_file is looked up
	// there first.
	promptDir string
}

// placedCriterion is a criterion and where the config wrote it.
type placedCriterion struct {
	spec criteria.Spec
	at   pos
}

// pos is a place in a config file.
type pos struct {
	file string
	line int
}

// EventLoop is the event_loop: section.
//
// For the limits, 0 means "no limit" unless the comment says otherwise;
// negative values are rejected.
type EventLoop struct {
	Prompt                  string   `yaml:"prompt"`
	PromptFile              string   `yaml:"prompt_file"`              // default PROMPT.md
	CompletionPromise       string   `yaml:"completion_promise"`       // default LOOP_COMPLETE
	StartingEvent           string   `yaml:"starting_event"`           // default task.start
	MaxIterations           int      `yaml:"max_iterations"`           // default 100; at least 1
	MaxRuntimeSeconds       int      `yaml:"max_runtime_seconds"`      // default 14400
	MaxCostUSD              float64  `yaml:"max_cost_usd"`             // 0: none
	MaxConsecutiveFailures  int      `yaml:"max_consecutive_failures"` // default 5
	CooldownDelaySeconds    int      `yaml:"cooldown_delay_seconds"`   // default 0
	RequiredEvents          []string `yaml:"required_events"`
	CancellationPromise     string   `yaml:"cancellation_promise"` // "": none
	EnforceHatScope         bool     `yaml:"enforce_hat_scope"`
	CompletionConfirmations int      `yaml:"completion_confirmations"`  // default 2; 1 or 2
	IterationTimeoutSeconds int      `yaml:"iteration_timeout_seconds"` // default 1800
	IdleTimeoutSeconds      int      `yaml:"idle_timeout_seconds"`      // default 600
	KillGraceSeconds        int      `yaml:"kill_grace_seconds"`        // default 10

	// What ralph keeps of one iteration's agent output (backends.OutputLimits).
	MaxOutputLineBytes int   `yaml:"max_output_line_bytes"` // default 16 MiB
	MaxOutputTextBytes int   `yaml:"max_output_text_bytes"` // default 1 MiB
	MaxActivityBytes   int   `yaml:"max_activity_bytes"`    // default 1 MiB
	MaxRawOutputBytes  int64 `yaml:"max_raw_output_bytes"`  // default 1 GiB

	// Accepted and stored now for work that is coming; nothing reads them yet.

	// MaxTokens bounds input plus output tokens over the run (the unit of
	// events.Usage.Total); 0: none. ralph.json's budget.max_tokens lands here.
	MaxTokens int64 `yaml:"max_tokens"`
	// The pacing budgets: when the next iteration would exceed one over
	// its rolling window (the last hour, the last 24 hours), the run waits
	// until the window allows it instead of ending (engine.Pacing); 0:
	// none. The cost budgets are in US dollars.
	TokensPerHour int64   `yaml:"tokens_per_hour"`
	TokensPerDay  int64   `yaml:"tokens_per_day"`
	CostPerHour   float64 `yaml:"cost_per_hour"`
	CostPerDay    float64 `yaml:"cost_per_day"`
	// StuckThreshold is how many iterations without progress count as stuck;
	// default 3, 0 disables the check.
	StuckThreshold int `yaml:"stuck_threshold"`
	// RateLimitMaxWaitSeconds bounds how long ralph waits for a rate limit to
	// lift before giving up; default 3600, 0 means do not wait.
	RateLimitMaxWaitSeconds int `yaml:"rate_limit_max_wait_seconds"`
	// VerifyEveryIteration checks acceptance_criteria after every iteration
	// and completes the run as soon as they pass, without a claim (set for
	// a ralph.json task file, whose task is done when its criteria pass).
	VerifyEveryIteration bool `yaml:"verify_every_iteration"`
}

// CLI is the cli: section, and the shape of a hat's backend: override.
type CLI struct {
	// Backend is a CLI name from backends (claude, codex, …), "command" for
	// any program ("custom" is read as "command"), or "auto".
	Backend    string            `yaml:"backend"`
	Command    string            `yaml:"command"` // required for command
	Args       []string          `yaml:"args"`
	PromptMode string            `yaml:"prompt_mode"` // arg | stdin; "": the CLI's default
	PromptFlag string            `yaml:"prompt_flag"`
	Env        map[string]string `yaml:"env"`
	Model      string            `yaml:"model"`
	// Fallback is the rest of the chain this backend heads: the backends
	// tried in order when it hits a rate limit whose reset is further away
	// than FallbackAfterSeconds, or fails for the provider's sake. Each
	// entry is written as a hat's backend: is (a name, or a mapping with
	// name:), without a fallback of its own; a chain has each backend once.
	Fallback []CLI `yaml:"fallback"`
	// FallbackAfterSeconds: a rate limit that lifts sooner is waited for;
	// 0 is unset: a hat's backend takes cli's, and cli's is
	// DefaultFallbackAfterSeconds (see FallbackAfter).
	FallbackAfterSeconds int `yaml:"fallback_after_seconds"`
	// DisallowedTools are tools no agent of the run may use, in the CLI's
	// own names; each hat's own are added to them (see
	// Config.DisallowedTools). Only cli: has them: a hat's backend: and a
	// fallback entry do not.
	DisallowedTools []string `yaml:"disallowed_tools"`
}

// DefaultFallbackAfterSeconds is cli.fallback_after_seconds' default: ten
// minutes is less than an agent's iteration costs in waiting, and more
// than the per-minute limits providers lift on their own.
const DefaultFallbackAfterSeconds = 600

// FallbackAfter is how far away a rate limit's reset must be for the chain
// that c heads to move on: c's own, else cli's (top), else the default.
func (c CLI) FallbackAfter(top CLI) time.Duration {
	return time.Duration(cmp.Or(c.FallbackAfterSeconds, top.FallbackAfterSeconds, DefaultFallbackAfterSeconds)) * time.Second
}

// Aggregate is a hat's aggregate: section.
type Aggregate struct {
	Mode    string `yaml:"mode"`
	Timeout int    `yaml:"timeout"` // seconds after the wave started; 0: 300
}

// AggregateModes are the values aggregate.mode takes.
var AggregateModes = []string{hats.AggregateWaitForAll}

// Hat is one entry under hats:.
type Hat struct {
	ID string `yaml:"-"`
	// Name defaults to ID.
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Triggers are topic patterns; a single string in the file is read as a
	// one-element list.
	Triggers         []string `yaml:"triggers"`
	Publishes        []string `yaml:"publishes"`
	Instructions     string   `yaml:"instructions"`
	DefaultPublishes string   `yaml:"default_publishes"`
	MaxActivations   int      `yaml:"max_activations"` // 0: no bound
	// Concurrency above 1 runs a wave of the hat's trigger events in
	// parallel, one worker per event; 0 and 1 run the hat as usual.
	Concurrency int `yaml:"concurrency"`
	// Aggregate makes the hat wait for every result of a wave.
	Aggregate *Aggregate `yaml:"aggregate"`
	// Timeout bounds one wave worker of the hat, in seconds; 0: the
	// aggregator's timeout, else 300.
	Timeout int `yaml:"timeout"`
	// Backend is nil when the hat uses cli:. Written as a name it is that CLI
	// with nothing else set; written as a mapping with backend: it is used as
	// written; written as a mapping without backend: it is cli: with the
	// mapping's keys laid over it (env merged key by key).
	Backend *CLI `yaml:"backend"`
	// Gates apply to this hat's events, before the top-level gates.
	Gates []Gate `yaml:"gates"`
	// Sandbox is nil when the hat has no sandbox: section; its keys are
	// laid over the loop's (see Sandbox.ForHat).
	Sandbox *Sandbox `yaml:"sandbox"`
	// DisallowedTools are tools this hat's agent may not use on top of
	// cli.disallowed_tools (see Config.DisallowedTools).
	DisallowedTools []string `yaml:"disallowed_tools"`
	// Line is where the hat is defined, for messages.
	Line int `yaml:"-"`
	// File is the config file that defines the hat, for messages.
	File string `yaml:"-"`
}

package chain

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
)

// Step is one loop of a chain, as the plan resolved it.
type Step struct {
	// Preset is a preset name (ralph init --list), laid over the chain's
	// config with -H; Config a config file, the step's whole config.
	// Exactly one is set.
	Preset string `json:"preset,omitempty"`
	Config string `json:"config,omitempty"`
	// Prompt is text added to this step's objective.
	Prompt string `json:"prompt,omitempty"`
	// Hats are the step's hats by id, and CompletionTopic its completion
	// topic, as its config says: for the dry run, and to find the payload
	// of its completion in its log.
	Hats            []string `json:"hats,omitempty"`
	CompletionTopic string   `json:"completion_topic,omitempty"`
	// Limits are the step's own config's limits, which the chain's budget
	// only lowers.
	Limits Budget `json:"limits,omitzero"`
	// OwnObjective says the step's config has an objective of its own
	// (event_loop.prompt, PROMPT.md), which it runs on when the chain
	// gives it none.
	OwnObjective bool `json:"-"`
}

// Label names the step in messages: its preset or its config file.
func (s Step) Label() string {
	if s.Preset != "" {
		return s.Preset
	}
	return s.Config
}

// Plan is what a chain runs: its steps in order, the objective they start
// from and the budget of them all.
type Plan struct {
	// Name is the chain's name under chains:, "" for steps given on the
	// command line.
	Name string `json:"name,omitempty"`
	// Configs are the config files a preset step's hats are laid over
	// (the chain command's -c, or ./ralph.yml when there is one).
	Configs   []string `json:"configs,omitempty"`
	Objective string   `json:"objective,omitempty"`
	Steps     []Step   `json:"steps"`
	Budget    Budget   `json:"budget,omitzero"`
}

// Budget bounds a chain as a whole (or, as a step's Limits, one loop); a
// zero field is no bound.
type Budget struct {
	MaxSteps   int           `json:"max_steps,omitempty"`
	MaxRuntime time.Duration `json:"max_runtime_ns,omitempty"`
	MaxCostUSD float64       `json:"max_cost_usd,omitempty"`
	MaxTokens  int64         `json:"max_tokens,omitempty"`
}

// Spent is what steps have used.
type Spent struct {
	Steps   int           `json:"steps"`
	Runtime time.Duration `json:"runtime_ns"`
	CostUSD float64       `json:"cost_usd"`
	Tokens  int64         `json:"tokens"`
}

// Add sums two.
func (s Spent) Add(o Spent) Spent {
	return Spent{Steps: s.Steps + o.Steps, Runtime: s.Runtime + o.Runtime, CostUSD: s.CostUSD + o.CostUSD, Tokens: s.Tokens + o.Tokens}
}

// Limit names a bound of the budget, as a key of chains.NAME.budget.
type Limit string

const (
	LimitSteps   Limit = "max_steps"
	LimitRuntime Limit = "max_runtime_seconds"
	LimitCost    Limit = "max_cost_usd"
	LimitTokens  Limit = "max_tokens"
)

// Exhausted is the first bound that spent reaches, "" when none does. A
// step about to start needs one step left, and something left of every
// other bound.
func (b Budget) Exhausted(spent Spent) Limit {
	switch {
	case b.MaxSteps > 0 && spent.Steps >= b.MaxSteps:
		return LimitSteps
	case b.MaxRuntime > 0 && spent.Runtime >= b.MaxRuntime:
		return LimitRuntime
	case b.MaxCostUSD > 0 && spent.CostUSD >= b.MaxCostUSD:
		return LimitCost
	case b.MaxTokens > 0 && spent.Tokens >= b.MaxTokens:
		return LimitTokens
	}
	return ""
}

// Describe says the bound l of b and how much of it spent used.
func (b Budget) Describe(l Limit, spent Spent) string {
	switch l {
	case LimitSteps:
		return fmt.Sprintf("max_steps %d (%d started)", b.MaxSteps, spent.Steps)
	case LimitRuntime:
		return fmt.Sprintf("max_runtime_seconds %d (%s used)", int64(b.MaxRuntime/time.Second), spent.Runtime.Round(time.Second))
	case LimitCost:
		return fmt.Sprintf("max_cost_usd %s ($%.4f spent)", trimFloat(b.MaxCostUSD), spent.CostUSD)
	case LimitTokens:
		return fmt.Sprintf("max_tokens %d (%d used)", b.MaxTokens, spent.Tokens)
	}
	return string(l)
}

// ForStep is what a step may spend: the chain's budget less what the
// steps before it spent, lowered further by the step's own limits. A
// resumed step counts its own spending from its start, so before is the
// steps before it only, however often it was resumed.
func (b Budget) ForStep(before Spent, own Budget) Budget {
	left := Budget{}
	if b.MaxRuntime > 0 {
		left.MaxRuntime = b.MaxRuntime - before.Runtime
	}
	if b.MaxCostUSD > 0 {
		left.MaxCostUSD = b.MaxCostUSD - before.CostUSD
	}
	if b.MaxTokens > 0 {
		left.MaxTokens = b.MaxTokens - before.Tokens
	}
	return Budget{
		MaxRuntime: lower(left.MaxRuntime, own.MaxRuntime),
		MaxCostUSD: lower(left.MaxCostUSD, own.MaxCostUSD),
		MaxTokens:  lower(left.MaxTokens, own.MaxTokens),
	}
}

// lower is the smaller of two bounds where 0 is none.
func lower[T int64 | float64 | time.Duration](a, b T) T {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// Sets are the `--set` values that start a step's loop with budget b:
// only the bounds it has, each at least the smallest value the key takes
// (a second, a token), since 0 would mean no bound.
func (b Budget) Sets() []string {
	var sets []string
	if b.MaxRuntime > 0 {
		sets = append(sets, fmt.Sprintf("event_loop.max_runtime_seconds=%d", int64(math.Ceil(b.MaxRuntime.Seconds()))))
	}
	if b.MaxCostUSD > 0 {
		sets = append(sets, fmt.Sprintf("event_loop.max_cost_usd=%s", trimFloat(b.MaxCostUSD)))
	}
	if b.MaxTokens > 0 {
		sets = append(sets, fmt.Sprintf("event_loop.max_tokens=%d", b.MaxTokens))
	}
	return sets
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "0" {
		return "0.000001" // what is left is below a millionth of a dollar, but not nothing
	}
	return s
}

// String is the budget in the words of its keys, "none" when it has no
// bound.
func (b Budget) String() string {
	var parts []string
	if b.MaxSteps > 0 {
		parts = append(parts, fmt.Sprintf("max_steps %d", b.MaxSteps))
	}
	if b.MaxRuntime > 0 {
		parts = append(parts, fmt.Sprintf("max_runtime_seconds %d", int64(math.Ceil(b.MaxRuntime.Seconds()))))
	}
	if b.MaxCostUSD > 0 {
		parts = append(parts, fmt.Sprintf("max_cost_usd %s", trimFloat(b.MaxCostUSD)))
	}
	if b.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("max_tokens %d", b.MaxTokens))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// usageTokens is the figure budgets count tokens in.
func usageTokens(u events.Usage) int64 { return u.Total() }

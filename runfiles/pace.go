package runfiles

import (
	"fmt"
	"slices"
	"time"
)

// TopicLoopPaced is ralph's line saying the run waits for a pacing budget
// (event_loop.tokens_per_hour, …) before its next iteration: which window,
// what the window had used, the budget, and until when (PacedRecord).
const TopicLoopPaced = "loop.paced"

// PaceHorizon is the longest pacing window: what a run spent longer ago
// than this counts in none, so the fold forgets it (RunState.Spent).
const PaceHorizon = 24 * time.Hour

// Spent is what one finished iteration used, and when it finished: the
// samples the pacing windows sum.
type Spent struct {
	At      time.Time `json:"at"`
	Tokens  int64     `json:"tokens,omitempty"`
	CostUSD float64   `json:"cost_usd,omitempty"`
}

// PacedRecord is loop.paced's payload. Used, Budget and Estimate are in
// the window's unit: tokens, or US dollars for the cost windows.
type PacedRecord struct {
	// Window is the budget's key: tokens_per_hour, tokens_per_day,
	// cost_per_hour or cost_per_day.
	Window string `json:"window"`
	// Used is what the window's iterations used when the wait began;
	// Estimate what the next iteration is expected to use (the mean of
	// the last iterations).
	Used     float64 `json:"used"`
	Budget   float64 `json:"budget"`
	Estimate float64 `json:"estimate"`
	// Until is when enough of the window's usage has aged out for the
	// next iteration to fit; WaitMS how long that was from the line.
	Until  time.Time `json:"until"`
	WaitMS int64     `json:"wait_ms"`
	// Oversize says the estimate alone is more than the budget: the run
	// waits until the window is empty, then runs the iteration anyway.
	Oversize bool `json:"oversize,omitempty"`
}

// Cost says the window counts US dollars, not tokens.
func (p PacedRecord) Cost() bool { return p.Window == "cost_per_hour" || p.Window == "cost_per_day" }

// Amount renders v, an amount in the window's unit.
func (p PacedRecord) Amount(v float64) string {
	if p.Cost() {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("%d", int64(v))
}

// Text is the wait in words, for status displays: "tokens_per_hour:
// 1200/1000".
func (p PacedRecord) Text() string {
	return fmt.Sprintf("%s: %s/%s", p.Window, p.Amount(p.Used), p.Amount(p.Budget))
}

// spend records what a finished iteration used, at, and forgets what is
// older than PaceHorizon before the newest sample. An iteration that used
// nothing is not a sample: it moves no window.
func (s *RunState) spend(at time.Time, r IterationFinishedRecord) {
	if at.IsZero() || (r.Usage.Total() == 0 && r.CostUSD == 0) {
		return
	}
	s.Spent = append(s.Spent, Spent{At: at, Tokens: r.Usage.Total(), CostUSD: r.CostUSD})
	newest := at
	for _, x := range s.Spent {
		if x.At.After(newest) {
			newest = x.At
		}
	}
	s.Spent = slices.DeleteFunc(s.Spent, func(x Spent) bool { return !x.At.After(newest.Add(-PaceHorizon)) })
}

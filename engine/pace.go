package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/runfiles"
)

// Pacing budgets spread a long unattended run over time instead of ending
// it: before an iteration starts, each budget's rolling window (the last
// hour, the last 24 hours) is summed over the iterations that finished in
// it (runfiles.RunState.Spent, folded from their iteration.finished lines,
// so a resumed run sees the same windows). The next iteration would exceed
// a budget when
//
//	used > 0 && used + estimate > budget
//
// where used is what the window's iterations used and estimate is the mean
// of the last paceSamples iterations (any window). The run then waits, in
// phase pacing, until enough of the window's oldest usage has aged out for
// used + estimate to fit, or until the window is empty: an iteration
// estimated at more than the whole budget runs once the window is empty
// (the loop.paced line says oversize), so it never waits for ever. With
// several budgets the latest moment wins. max_cost_usd and max_tokens stay
// hard limits, checked before.

// Pacing are the pacing budgets (event_loop.tokens_per_hour, …); a zero
// budget paces nothing.
type Pacing struct {
	TokensPerHour int64
	TokensPerDay  int64
	CostPerHour   float64 // US dollars
	CostPerDay    float64
}

// Any says some budget is set.
func (p Pacing) Any() bool {
	return p.TokensPerHour > 0 || p.TokensPerDay > 0 || p.CostPerHour > 0 || p.CostPerDay > 0
}

// CostKeys are the cost budgets set, by their keys, for the warnings about
// backends whose cost ralph cannot know.
func (p Pacing) CostKeys() []string {
	var keys []string
	if p.CostPerHour > 0 {
		keys = append(keys, "cost_per_hour")
	}
	if p.CostPerDay > 0 {
		keys = append(keys, "cost_per_day")
	}
	return keys
}

// paceSamples is how many of the last iterations the estimate of the next
// one averages: enough to smooth one odd iteration, few enough to follow a
// run whose iterations grow.
const paceSamples = 3

// paceWindow is one budget.
type paceWindow struct {
	key    string
	span   time.Duration
	budget float64
	amount func(runfiles.Spent) float64
}

func tokensOf(s runfiles.Spent) float64 { return float64(s.Tokens) }
func costOf(s runfiles.Spent) float64   { return s.CostUSD }

func (p Pacing) windows() []paceWindow {
	all := []paceWindow{
		{"tokens_per_hour", time.Hour, float64(p.TokensPerHour), tokensOf},
		{"tokens_per_day", runfiles.PaceHorizon, float64(p.TokensPerDay), tokensOf},
		{"cost_per_hour", time.Hour, p.CostPerHour, costOf},
		{"cost_per_day", runfiles.PaceHorizon, p.CostPerDay, costOf},
	}
	return slices.DeleteFunc(all, func(w paceWindow) bool { return w.budget <= 0 })
}

// paceEpsilon absorbs the rounding of summed dollar amounts.
const paceEpsilon = 1e-9

// wait is the pacing wait w asks for at now over spent, nil when the next
// iteration fits.
func (w paceWindow) wait(spent []runfiles.Spent, now time.Time) *runfiles.PacedRecord {
	from := now.Add(-w.span)
	in := make([]runfiles.Spent, 0, len(spent))
	for _, s := range spent {
		if s.At.After(from) {
			in = append(in, s)
		}
	}
	// The log's order is the clock's, unless the clock went back.
	byTime := func(a, b runfiles.Spent) int { return a.At.Compare(b.At) }
	if !slices.IsSortedFunc(in, byTime) {
		slices.SortStableFunc(in, byTime)
	}
	used := 0.0
	for _, s := range in {
		used += w.amount(s)
	}
	estimate := paceEstimate(spent, w.amount)
	if used <= paceEpsilon || used+estimate <= w.budget+paceEpsilon {
		return nil
	}
	// Drop the oldest samples until the rest and the estimate fit, or
	// none is left; the wait ends when the last one dropped ages out.
	left, until := used, now
	for _, s := range in {
		left -= w.amount(s)
		until = s.At.Add(w.span)
		if left <= paceEpsilon || left+estimate <= w.budget+paceEpsilon {
			break
		}
	}
	return &runfiles.PacedRecord{Window: w.key, Used: used, Budget: w.budget, Estimate: estimate,
		Until: until, WaitMS: until.Sub(now).Milliseconds(), Oversize: estimate > w.budget+paceEpsilon}
}

// paceEstimate is what the next iteration is expected to use: the mean of
// the last paceSamples iterations.
func paceEstimate(spent []runfiles.Spent, amount func(runfiles.Spent) float64) float64 {
	last := spent[max(len(spent)-paceSamples, 0):]
	if len(last) == 0 {
		return 0
	}
	sum := 0.0
	for _, s := range last {
		sum += amount(s)
	}
	return sum / float64(len(last))
}

// paceWait is the pacing wait the budgets ask for now, the one that ends
// latest; nil when the next iteration fits every window.
func paceWait(p Pacing, spent []runfiles.Spent, now time.Time) *runfiles.PacedRecord {
	var latest *runfiles.PacedRecord
	for _, w := range p.windows() {
		if r := w.wait(spent, now); r != nil && (latest == nil || r.Until.After(latest.Until)) {
			latest = r
		}
	}
	return latest
}

// paced says whether the next iteration must wait for a pacing budget:
// checking then enters pacing.
func (e *Engine) paced() bool {
	return paceWait(e.opts.Settings.Pacing, e.st.Spent, e.now()) != nil
}

// pacing records the wait in the log (loop.paced), checkpoints, says until
// when, and waits; then checking looks again, so a budget changed on
// resume, a stop request or a limit is seen before the iteration starts.
// A signal ends the run as interrupted; a stop request goes back to
// checking, which ends it as stopped.
func (e *Engine) pacing(ctx context.Context) (runfiles.Phase, error) {
	r := paceWait(e.opts.Settings.Pacing, e.st.Spent, e.now())
	if r == nil {
		return runfiles.PhaseChecking, nil
	}
	if err := e.append(runfiles.RalphEvent(runfiles.TopicLoopPaced, *r)); err != nil {
		return "", err
	}
	if err := e.saveAs(runfiles.PhasePacing); err != nil {
		return "", err
	}
	if pr, ok := e.opts.Reporter.(PaceReporter); ok {
		pr.Paced(*r)
	}
	e.log.Debug("paced", "window", r.Window, "until", r.Until)
	if r.Oversize {
		e.opts.Reporter.Warn(fmt.Sprintf("the next iteration is expected to use %s, more than the whole %s budget of %s: "+
			"it runs once the window is empty, at %s", r.Amount(r.Estimate), r.Window, r.Amount(r.Budget), r.Until.Local().Format(time.DateTime)))
	}
	if err := e.sleepPaced(ctx, e.paceSleep(r)); err != nil && ctx.Err() != nil {
		e.ending = e.terminateBy(runfiles.ReasonInterrupted, runfiles.CauseSignal,
			fmt.Sprintf("interrupted while paced (%s, until %s)", r.Text(), r.Until.Local().Format(time.DateTime)))
		return runfiles.PhaseTerminating, nil
	}
	return runfiles.PhaseChecking, nil
}

// paceSleep is how long pacing sleeps for r: until r's moment, or until
// max_runtime_seconds is reached if that comes first, as a run that would
// wake past its runtime ends there rather than overstay it.
func (e *Engine) paceSleep(r *runfiles.PacedRecord) time.Duration {
	d := max(r.Until.Sub(e.now()), 0)
	if limit := e.opts.Settings.MaxRuntime; limit > 0 {
		d = min(d, max(limit-e.st.Runtime(e.now()), 0))
	}
	return d
}

// sleepPaced waits d, or until ctx ends or a stop is requested, on
// Options.Sleep's clock when the run was given one.
func (e *Engine) sleepPaced(ctx context.Context, d time.Duration) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.stop.Changed():
			cancel()
		case <-wctx.Done():
		}
	}()
	if e.opts.Sleep != nil {
		return e.opts.Sleep(wctx, d)
	}
	return sleep(wctx, d)
}

// PaceReporter is a Reporter that also wants to hear that the run waits
// for a pacing budget, and until when.
type PaceReporter interface {
	Paced(r runfiles.PacedRecord)
}

// Paced reaches the Reporter only if it wants it; a pacing wait holds no
// text from outside ralph.
func (x redactingReporter) Paced(r runfiles.PacedRecord) {
	if pr, ok := x.to.(PaceReporter); ok {
		pr.Paced(r)
	}
}

// PacingWarnings are CostLimitWarnings for the cost budgets
// (cost_per_hour, cost_per_day): a backend whose iterations' cost ralph
// cannot know moves no cost window, so those budgets cannot pace it.
// Nothing when no cost budget is set.
func PacingWarnings(p Pacing, prices *pricing.Table, backends ...Backend) []string {
	keys := p.CostKeys()
	if len(keys) == 0 {
		return nil
	}
	return unpricedWarnings(strings.Join(keys, " and "), prices, backends...)
}

var _ PaceReporter = redactingReporter{}

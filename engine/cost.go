package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/runfiles"
)

// premiumRequestRow is the price table's row for a request billed as a
// premium request (GitHub Copilot): a run that used some is priced by it,
// unless its model's own row has a per-request figure.
const premiumRequestRow = "copilot"

// costAware is what a Backend may say about the cost of its runs
// (backends.Backend says all of it); a Backend without it is priced by the
// model its output names, if any.
type costAware interface {
	// ConfiguredModel is cli.model or the hat's backend: model; "" keeps
	// the CLI's default.
	ConfiguredModel() string
	// ReportsCost is true for a CLI that says what each run cost.
	ReportsCost() bool
	// NamesModel is true for a CLI whose output names the model it ran.
	NamesModel() bool
}

// priceIteration decides what res cost: the CLI's own figure when it gave
// one, else the tokens (and premium requests) at the table's price for the
// model, else unknown.
func priceIteration(prices *pricing.Table, res events.AgentResult, b Backend) runfiles.IterationCost {
	model := res.Model
	if ca, ok := b.(costAware); ok && model == "" {
		model = ca.ConfiguredModel()
	}
	if res.CostUSD > 0 {
		return runfiles.IterationCost{USD: res.CostUSD, Source: runfiles.CostReported, Model: model}
	}
	p, ok := prices.Lookup(model)
	if res.Requests > 0 && (!ok || p.PerRequest == 0) {
		p, ok = prices.Lookup(premiumRequestRow)
	}
	if !ok || model == "" {
		return runfiles.IterationCost{Source: runfiles.CostUnknown, Model: model}
	}
	return runfiles.IterationCost{USD: p.Cost(res.Usage, res.Requests), Source: runfiles.CostComputed, Model: model}
}

// unknownCostWarning says why an iteration's cost is unknown and what to
// set; the engine gives it once per run and model.
func unknownCostWarning(c runfiles.IterationCost) string {
	if c.Model == "" {
		return "the agent did not say which model it ran and cli.model is not set, so what its iterations cost is unknown " +
			"(and max_cost_usd cannot stop the run): set cli.model (or the hat's backend: model), and pricing: {MODEL: {input: …, output: …}} if ralph has no price for it (`ralph pricing MODEL`)"
	}
	return fmt.Sprintf("ralph has no price for model %s, so what its iterations cost is unknown (and max_cost_usd cannot stop the run): "+
		"set pricing: {%s: {input: …, output: …}} in ralph.yml, in USD per million tokens", c.Model, c.Model)
}

// warnUnknownCost gives unknownCostWarning the first time this run meets
// the model. An agent that names no model and counts no tokens (a plain
// command) gives nothing to act on, so it is not warned about: its cost
// is still recorded as unknown.
func (e *Engine) warnUnknownCost(c runfiles.IterationCost, u events.Usage) {
	if c.Source != runfiles.CostUnknown || slices.Contains(e.unpriced, c.Model) || (c.Model == "" && u == (events.Usage{})) {
		return
	}
	e.unpriced = append(e.unpriced, c.Model)
	e.opts.Reporter.Warn(unknownCostWarning(c))
}

// CostLimitWarnings says, for each backend whose runs max_cost_usd cannot
// be enforced on, why and what to set: one that neither reports its cost
// nor runs a model the table prices. Nothing when maxCostUSD is 0 (no
// limit). `ralph validate` and the start of `ralph loop` show them.
func CostLimitWarnings(maxCostUSD float64, prices *pricing.Table, backends ...Backend) []string {
	if maxCostUSD <= 0 {
		return nil
	}
	return unpricedWarnings("max_cost_usd", prices, backends...)
}

// unpricedWarnings are CostLimitWarnings for the cost limit or budgets
// named limit.
func unpricedWarnings(limit string, prices *pricing.Table, backends ...Backend) []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range backends {
		ca, ok := b.(costAware)
		if !ok || ca.ReportsCost() {
			continue
		}
		model := ca.ConfiguredModel()
		key := b.Name() + "\x00" + model
		if seen[key] {
			continue
		}
		seen[key] = true
		switch _, priced := prices.Lookup(model); {
		case model == "" && !ca.NamesModel():
			out = append(out, fmt.Sprintf("%s cannot be enforced for backend %s: it does not say which model it runs and cli.model is not set; "+
				"set cli.model (or the hat's backend: model), and pricing: {MODEL: {input: …, output: …}} if ralph has no price for it", limit, b.Name()))
		case model != "" && !priced:
			out = append(out, fmt.Sprintf("%s cannot be enforced for backend %s: ralph has no price for model %s; "+
				"set pricing: {%s: {input: …, output: …}} in ralph.yml, in USD per million tokens", limit, b.Name(), model, model))
		}
	}
	return out
}

// costLimitWarnings are CostLimitWarnings for the run's own backends.
func (e *Engine) costLimitWarnings() []string {
	all := []Backend{e.opts.Backend}
	for _, id := range slices.Sorted(maps.Keys(e.opts.PerHat)) {
		all = append(all, e.opts.PerHat[id])
	}
	return append(CostLimitWarnings(e.opts.Settings.MaxCostUSD, e.opts.Prices, all...),
		PacingWarnings(e.opts.Settings.Pacing, e.opts.Prices, all...)...)
}

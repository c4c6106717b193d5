package view

import (
	"fmt"
	"strconv"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// CostText is a cost as people read it: "$1.2300" as the agents reported
// it, "$1.2300 (computed)" when ralph computed some of it from tokens,
// "$1.2300 + unknown" when some iteration ran a model with no price, and
// "unknown" when no part of it is known: never "$0.0000" for a run that
// was not free.
func CostText(c runfiles.CostTotal) string {
	switch {
	case c.Unknown && c.USD == 0:
		return "unknown"
	case c.Unknown:
		return fmt.Sprintf("$%.4f + unknown", c.USD)
	case c.Computed:
		return fmt.Sprintf("$%.4f (computed)", c.USD)
	}
	return fmt.Sprintf("$%.4f", c.USD)
}

// iterationCostText is CostText for one iteration.
func iterationCostText(c runfiles.IterationCost) string {
	return CostText(runfiles.CostTotal{}.Add(c))
}

// finishedCost is an iteration's cost in `ralph events`: "$0.0100", or
// "$0.0100 (computed)", or "cost unknown".
func finishedCost(usd float64, source runfiles.CostSource) string {
	return string(appendFinishedCost(nil, usd, source))
}

// appendFinishedCost is finishedCost for the table's fast path.
func appendFinishedCost(t []byte, usd float64, source runfiles.CostSource) []byte {
	if source == runfiles.CostUnknown {
		return append(t, "cost unknown"...)
	}
	t = append(t, '$')
	t = strconv.AppendFloat(t, usd, 'f', 4, 64)
	if source == runfiles.CostComputed {
		t = append(t, " (computed)"...)
	}
	return t
}

// costCell is a run's total in `ralph events`: "cost unknown" rather than
// a bare "unknown".
func costCell(text string) string {
	if text == "unknown" {
		return "cost unknown"
	}
	return text
}

// iterationCost is the cost the engine gave a finished iteration, or,
// from a caller that priced nothing, the agent's own figure.
func iterationCost(it engine.IterationInfo, res events.AgentResult) runfiles.IterationCost {
	if it.Cost.Source == "" {
		return runfiles.IterationCost{USD: res.CostUSD, Source: runfiles.CostReported, Model: res.Model}
	}
	return it.Cost
}

package view

import (
	"fmt"

	"github.com/ralph-loop/ralph/engine"
)

// CostText is a cost as people read it: "$1.2300" as the agents reported
// it, "$1.2300 (computed)" when ralph computed some of it from tokens,
// "$1.2300 + unknown" when some iteration ran a model with no price, and
// "unknown" when no part of it is known: never "$0.0000" for a run that
// was not free.
func CostText(c engine.CostTotal) string {
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
func iterationCostText(c engine.IterationCost) string {
	return CostText(engine.CostTotal{}.Add(c))
}

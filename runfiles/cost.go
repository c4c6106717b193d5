package runfiles

// CostSource says how ralph knows what an iteration cost, in
// iteration.finished as "cost_source".
type CostSource string

// Sources of an iteration's cost.
const (
	// CostReported: the agent CLI said what the run cost (Claude Code).
	CostReported CostSource = "reported"
	// CostComputed: ralph computed it from the tokens at the price table's
	// figures for the model.
	CostComputed CostSource = "computed"
	// CostUnknown: the model has no price; cost_usd is 0 but the run was
	// not free.
	CostUnknown CostSource = "unknown"
)

// IterationCost is what one iteration cost and how ralph knows.
type IterationCost struct {
	USD    float64
	Source CostSource
	// Model is the model the iteration was priced by: the one the agent's
	// output names, else the configured one; "" when neither says.
	Model string
}

// CostTotal is what several iterations cost together, and how much of it
// is known: a run's, or an autopilot task's.
type CostTotal struct {
	USD float64 `json:"cost_usd"`
	// Computed: some of USD was computed from tokens, not reported.
	Computed bool `json:"cost_computed,omitempty"`
	// Unknown: some iteration's cost is unknown, so USD is less than
	// what was spent.
	Unknown bool `json:"cost_unknown,omitempty"`
}

// Add counts one more iteration.
func (c CostTotal) Add(it IterationCost) CostTotal {
	c.USD += it.USD
	c.Computed = c.Computed || it.Source == CostComputed
	c.Unknown = c.Unknown || it.Source == CostUnknown
	return c
}

// Source is how the total is known: unknown when no part of it is known,
// computed when some part was computed, else reported.
func (c CostTotal) Source() CostSource {
	switch {
	case c.Unknown && c.USD == 0:
		return CostUnknown
	case c.Computed:
		return CostComputed
	}
	return CostReported
}

// Cost is what the run has cost so far.
func (s *RunState) Cost() CostTotal {
	return CostTotal{USD: s.CostUSD, Computed: s.CostComputed, Unknown: s.CostUnknown}
}

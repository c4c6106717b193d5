package view

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

func TestCostTextIsNeverAFalseZero(t *testing.T) {
	assert.Equal(t, "$1.2300", CostText(runfiles.CostTotal{USD: 1.23}))
	assert.Equal(t, "$1.2300 (computed)", CostText(runfiles.CostTotal{USD: 1.23, Computed: true}))
	assert.Equal(t, "$1.2300 + unknown", CostText(runfiles.CostTotal{USD: 1.23, Computed: true, Unknown: true}))
	assert.Equal(t, "unknown", CostText(runfiles.CostTotal{Unknown: true}))
	assert.Equal(t, "$0.0000", CostText(runfiles.CostTotal{}), "a reported zero is a zero")
}

func TestEventsTableShowsTheCostSource(t *testing.T) {
	assert.Equal(t, "builder success 1s 1.2k tok $0.5000 (computed)", describeFinished(viewIterationFinished{Hat: "builder",
		Outcome: runfiles.OutcomeSuccess, DurationMS: 1000, CostUSD: 0.5, CostSource: runfiles.CostComputed}.withTokens(1200)))
	assert.Equal(t, "builder success 1s 1.2k tok cost unknown", describeFinished(viewIterationFinished{Hat: "builder",
		Outcome: runfiles.OutcomeSuccess, DurationMS: 1000, CostSource: runfiles.CostUnknown}.withTokens(1200)))
	assert.Contains(t, describeTerminate(viewTerminate{Reason: runfiles.ReasonMaxCost, ExitCode: 2, CostUSD: 2.4,
		CostSource: runfiles.CostComputed, CostUnknown: true}), "· $2.4000 + unknown")
	assert.Contains(t, describeTerminate(viewTerminate{Reason: runfiles.ReasonCompleted, CostSource: runfiles.CostUnknown, CostUnknown: true}),
		"· cost unknown")
}

func (p viewIterationFinished) withTokens(n int64) viewIterationFinished {
	p.Tokens.InputTokens = n
	return p
}

func TestAutopilotTaskFinishedSaysWhatItCost(t *testing.T) {
	finished := func(p runfiles.AutopilotPayload) string {
		return AutopilotEventText(events.Event{Topic: runfiles.TopicTaskFinished, Payload: events.ObjectPayload(p)})
	}
	assert.Equal(t, "T-1: its loop completed, cost $0.4000 + unknown; queued for merge",
		finished(runfiles.AutopilotPayload{Task: "T-1", Cost: &runfiles.CostTotal{USD: 0.4, Computed: true, Unknown: true}}))
	assert.Equal(t, "T-1: its loop completed; queued for merge", finished(runfiles.AutopilotPayload{Task: "T-1"}))
}

package view

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/runfiles"
)

func TestAChainStepsEndPointsToTheChainsResume(t *testing.T) {
	tests := map[runfiles.Reason]string{
		runfiles.ReasonMaxCost:         "`ralph chain resume --max-cost-usd USD`",
		runfiles.ReasonBudgetExhausted: "`ralph chain resume --max-tokens N`",
		runfiles.ReasonMaxRuntime:      "`ralph chain resume --max-runtime DURATION`",
		runfiles.ReasonMaxIterations:   "`ralph chain resume --max-iterations N`",
		runfiles.ReasonStuck:           "the chain stops at this step",
	}
	for reason, want := range tests {
		t.Run(string(reason), func(t *testing.T) {
			msg := EndMessage(runfiles.Termination{Reason: reason, Message: "a limit", GoOn: &runfiles.GoOn{Mode: runfiles.ModeChainStep, Raise: "40"}})
			assert.Contains(t, msg, want)
			assert.NotContains(t, msg, "ralph loop")
		})
	}
	assert.Equal(t, "ralph chain resume", ResumeOf(filepath.Join(".ralph", "chains", "c-1", "step-2", "events-20261128-100000.jsonl")))
	assert.Equal(t, "ralph loop --resume", ResumeOf(filepath.Join(".ralph", "events-20261128-100000.jsonl")))
}

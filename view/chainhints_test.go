package view

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/hint"
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

func TestAChainStepCutOffPointsToTheChainsResume(t *testing.T) {
	for _, cause := range []runfiles.Cause{runfiles.CauseLostDir, runfiles.CauseGitArmed} {
		t.Run(string(cause), func(t *testing.T) {
			end := runfiles.Termination{Reason: runfiles.ReasonFatal, Cause: cause, Message: "cut off"}
			assert.Contains(t, EndMessage(end), "`ralph loop --resume`", "a loop of its own")
			end.GoOn = &runfiles.GoOn{Mode: runfiles.ModeChainStep}
			msg := EndMessage(end)
			assert.Contains(t, msg, "`ralph chain resume`")
			assert.NotContains(t, msg, "ralph loop")
		})
	}
	assert.Contains(t, ResumeHint(runfiles.ModeChainStep), "`ralph chain resume`")
	assert.NotContains(t, ResumeHint(runfiles.ModeChainStep), "ralph loop")
}

func TestAChainStepsEngineErrorsPointToTheChainsResume(t *testing.T) {
	tests := map[string]error{
		"storage":    &engine.StorageError{Op: "append to the event log", Path: filepath.Join(".ralph", "chains", "c-1", "step-2", "events.jsonl"), Err: syscall.ENOSPC},
		"auth":       &engine.AgentAuthError{Backend: "claude", Message: "not logged in"},
		"git armed":  &engine.GitArmedError{By: "the agent of hat fixer", Changed: []string{".git/config"}},
		"unfinished": &engine.UnfinishedRunError{RunID: "r1", Iteration: 2, Why: "cut off"},
	}
	for name, err := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, HintOf(err), "ralph loop --resume", "a loop of its own")
			step := StepHintOf(err)
			assert.Contains(t, step, "ralph chain resume")
			assert.NotContains(t, step, "ralph loop")
		})
	}
	fixed := &hint.Error{Err: errors.New("bad"), Fix: "do this"}
	assert.Equal(t, "do this", StepHintOf(fixed), "an error's own fix stands")
}

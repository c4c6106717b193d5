package view

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// The model follows a run: live figures while an agent runs, replaced by
// its result when it ends; commits and the last event for the views.
func TestModelFollowsTheRun(t *testing.T) {
	m := NewModel(stepClock())
	it := testIteration(1, "builder")
	m.LoopStarted(engine.RunInfo{RunID: "run-1", MaxIter: 5})
	m.IterationStarted(it)
	m.Activity(it, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 100}, CostUSD: 0.5})
	m.Activity(it, events.Activity{Kind: events.ActivityTool, Tool: events.ToolRead})
	run := m.Run()
	assert.Equal(t, PhaseRunning, run.Phase)
	assert.Equal(t, Figures{Usage: events.Usage{InputTokens: 100}, CostUSD: 0.5, Tools: events.ToolCounts{Read: 1}}, run.Total())

	m.Commit(it, engine.Commit{Hash: "abcdef0123456789", Subject: "add a"})
	m.IterationFinished(it, events.AgentResult{Usage: events.Usage{InputTokens: 200}, CostUSD: 0.25})
	m.Stuck(runfiles.Termination{Reason: runfiles.ReasonStuck, Message: "no box checked"}, 3)
	run = m.Run()
	assert.Equal(t, Figures{Usage: events.Usage{InputTokens: 200}, CostUSD: 0.25}, run.Total(), "the result replaces the live figures")
	assert.Equal(t, PhaseBetween, run.Phase)
	assert.Equal(t, runfiles.OutcomeSuccess, run.LastOutcome)
	assert.Equal(t, "abcdef0123 add a", run.LastCommit())
	assert.Equal(t, "stuck: no box checked", run.LastEvent)
	assert.True(t, run.Stuck)
}

// Essentials passes on warnings, a stuck run and the end, nothing else.
func TestEssentials(t *testing.T) {
	var out bytes.Buffer
	m := NewModel(stepClock())
	r := Tee(m, Essentials(NewText(&out, m, stepClock(), Options{})))
	it := testIteration(1, "builder")
	r.IterationStarted(it)
	r.Activity(it, events.Activity{Kind: events.ActivityText, Text: "agent text"})
	r.Commit(it, engine.Commit{Hash: "abcdef0123456789", Subject: "add a"})
	r.TaskComplete(0, "a box")
	r.Warn("disk full")
	r.Stuck(runfiles.Termination{Reason: runfiles.ReasonStuck, Message: "no box checked"}, 3)
	r.LoopFinished(engine.Summary{RunID: "r", Reason: runfiles.ReasonStuck, ExitCode: 1, Runtime: time.Second})
	got := out.String()
	assert.NotContains(t, got, "iteration 1")
	assert.NotContains(t, got, "agent text")
	assert.NotContains(t, got, "task 1 done")
	assert.Contains(t, got, "ralph: warning: disk full")
	assert.Contains(t, got, "stuck after 3 iterations")
	assert.Contains(t, got, "ralph: 1 commit: abcdef0123 add a", "the summary lists the model's commits")
}

func TestModelHoldsTheQuestionARunWaitsOn(t *testing.T) {
	m := NewModel(stepClock())
	q := runfiles.Question{ID: "q-1", Text: "Keep the v1 API?", Hat: "builder"}
	m.WaitingForHuman(q)
	r := m.Run()
	require.NotNil(t, r.Question)
	assert.Equal(t, q, *r.Question)
	assert.Equal(t, PhaseAwaitingHuman, r.Phase)
	assert.Contains(t, renderPanel(r, time.Now(), 120)[1], "waiting for an answer: Keep the v1 API?")

	m.HumanAnswered(q, engine.Reply{Text: "drop it", By: "cli"})
	r = m.Run()
	assert.Nil(t, r.Question)
	assert.Equal(t, PhaseBetween, r.Phase)
	assert.Equal(t, "q-1 answered by cli: drop it", r.LastEvent)
}

// While an iteration runs, what it spent is unknown until its agent
// reports a cost: the run's total is never a false "$0.0000", before the
// first iteration ends nor after it.
func TestARunningIterationsCostIsUnknownUntilReported(t *testing.T) {
	m := NewModel(stepClock())
	m.LoopStarted(engine.RunInfo{RunID: "run-1", MaxIter: 5})
	assert.Equal(t, "$0.0000", CostText(m.Run().Total().Cost()), "nothing ran: nothing was spent")

	first := testIteration(1, "builder")
	m.IterationStarted(first)
	assert.Equal(t, "unknown", CostText(m.Run().Total().Cost()))
	m.Activity(first, events.Activity{Kind: events.ActivityUsage, Usage: events.Usage{InputTokens: 100}})
	assert.Equal(t, "unknown", CostText(m.Run().Total().Cost()), "tokens are not a cost")
	m.IterationFinished(first, events.AgentResult{CostUSD: 0.25})
	assert.Equal(t, "$0.2500", CostText(m.Run().Total().Cost()))

	second := testIteration(2, "builder")
	m.IterationStarted(second)
	assert.Equal(t, "$0.2500 + unknown", CostText(m.Run().Total().Cost()))
	m.Activity(second, events.Activity{Kind: events.ActivityUsage, CostUSD: 0.5})
	assert.Equal(t, "$0.7500", CostText(m.Run().Total().Cost()), "what the agent reported so far")
}

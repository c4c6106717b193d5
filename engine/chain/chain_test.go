package chain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

func TestForStepIsWhatIsLeftLoweredByTheStepsOwnLimits(t *testing.T) {
	b := chain.Budget{MaxSteps: 3, MaxRuntime: time.Hour, MaxCostUSD: 2, MaxTokens: 1000}
	before := chain.Spent{Steps: 1, Runtime: 20 * time.Minute, CostUSD: 0.5, Tokens: 400}
	got := b.ForStep(before, chain.Budget{MaxRuntime: 4 * time.Hour, MaxCostUSD: 1})
	assert.Equal(t, chain.Budget{MaxRuntime: 40 * time.Minute, MaxCostUSD: 1, MaxTokens: 600}, got)
	assert.Equal(t, []string{"event_loop.max_runtime_seconds=2400", "event_loop.max_cost_usd=1", "event_loop.max_tokens=600"}, got.Sets())

	// No chain budget: the step's own limits stand; none, no --set.
	assert.Equal(t, chain.Budget{MaxTokens: 5}, chain.Budget{}.ForStep(before, chain.Budget{MaxTokens: 5}))
	assert.Empty(t, chain.Budget{}.Sets())
	// A bound almost spent is still a bound, never 0 (no bound).
	assert.Equal(t, []string{"event_loop.max_runtime_seconds=1", "event_loop.max_cost_usd=0.000001"},
		chain.Budget{MaxRuntime: time.Millisecond, MaxCostUSD: 1e-9}.Sets())
}

func TestExhaustedNamesTheFirstBoundReached(t *testing.T) {
	b := chain.Budget{MaxSteps: 2, MaxRuntime: time.Minute, MaxCostUSD: 1, MaxTokens: 100}
	tests := map[string]struct {
		spent chain.Spent
		want  chain.Limit
	}{
		"nothing spent":  {chain.Spent{}, ""},
		"steps":          {chain.Spent{Steps: 2}, chain.LimitSteps},
		"runtime":        {chain.Spent{Runtime: time.Minute}, chain.LimitRuntime},
		"cost":           {chain.Spent{CostUSD: 1.2}, chain.LimitCost},
		"tokens":         {chain.Spent{Tokens: 100}, chain.LimitTokens},
		"under each one": {chain.Spent{Steps: 1, Runtime: time.Second, CostUSD: 0.99, Tokens: 99}, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tt.want, b.Exhausted(tt.spent)) })
	}
	assert.Empty(t, chain.Budget{}.Exhausted(chain.Spent{Steps: 99, CostUSD: 99}), "no budget, no bound")
}

func TestStateRoundTripsAndNamesTheLatest(t *testing.T) {
	d := runfiles.In(t.TempDir())
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	_, err := chain.Latest(d)
	require.ErrorIs(t, err, chain.ErrNoChain)

	plan := chain.Plan{Name: "review then fix", Objective: "x", Steps: []chain.Step{{Preset: "review"}, {Config: "fix.yml"}},
		Budget: chain.Budget{MaxCostUSD: 1}}
	id := chain.NewID(d, plan.Name, now)
	assert.Equal(t, "reviewthenfix-20261128-120000", id)
	st := chain.NewState(id, plan, now)
	st.Steps = append(st.Steps, chain.StepRecord{N: 1, Label: "review", Status: chain.Completed, Spent: chain.Spent{Steps: 1, CostUSD: 0.25}})
	st.Current = 2
	require.NoError(t, chain.Save(d, st, now))
	assert.Equal(t, id+"-1", chain.NewID(d, plan.Name, now), "a second chain in the same second")

	got, err := chain.Latest(d)
	require.NoError(t, err)
	assert.Equal(t, st, got)
	assert.Equal(t, "chain review then fix: step 2/2 (fix.yml)", got.Where())
	assert.InDelta(t, 0.25, got.SpentBefore(2).CostUSD, 1e-12)
	assert.InDelta(t, 0, got.SpentBefore(1).CostUSD, 1e-12)
}

func TestStateOfVersion1IsReadAndRebudgetReopensAChainItsBudgetStopped(t *testing.T) {
	d := runfiles.In(t.TempDir())
	require.NoError(t, os.MkdirAll(d.Chain("c1"), 0o700))
	// As the first ralph with chains wrote it: no budget_changes.
	v1 := `{"version": 1, "id": "c1", "status": "stopped", "current": 2, "exit_code": 2,
		"message": "the chain's budget is spent",
		"plan": {"steps": [{"preset": "review"}, {"preset": "tdd"}], "budget": {"max_cost_usd": 0.5}},
		"steps": [{"n": 1, "label": "review", "status": "completed", "spent": {"steps": 1, "cost_usd": 0.3}},
		          {"n": 2, "label": "tdd", "status": "stopped", "exit_code": 2, "spent": {"steps": 1, "cost_usd": 0.2}}]}`
	require.NoError(t, os.WriteFile(d.ChainState("c1"), []byte(v1), 0o600))
	st, err := chain.Load(d, "c1")
	require.NoError(t, err)
	assert.Empty(t, st.BudgetChanges)

	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	require.True(t, st.Rebudget(chain.Budget{MaxCostUSD: 2}, now))
	assert.Equal(t, chain.Running, st.Status)
	assert.Equal(t, 2, st.Current)
	assert.Equal(t, chain.Running, st.Record(2).Status, "the step that stopped goes on")
	assert.Equal(t, []chain.BudgetChange{{At: now, From: chain.Budget{MaxCostUSD: 0.5}, To: chain.Budget{MaxCostUSD: 2}}}, st.BudgetChanges)
	require.NoError(t, chain.Save(d, st, now))
	got, err := chain.Load(d, "c1")
	require.NoError(t, err)
	assert.Equal(t, st, got)
	data, err := os.ReadFile(d.ChainState("c1"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"version": 2`)

	// A chain that completed, or that a step stopped on a failure, does
	// not go on, and keeps its budget.
	for _, ended := range []chain.State{{Status: chain.Completed}, {Status: chain.Stopped, ExitCode: 1}} {
		st := ended
		st.Plan.Steps, st.Current = []chain.Step{{Preset: "tdd"}}, 1
		assert.False(t, st.Rebudget(chain.Budget{MaxCostUSD: 2}, now))
		assert.Empty(t, st.BudgetChanges)
		assert.Zero(t, st.Plan.Budget)
	}
}

func TestStateRefusesWhatItCannotUse(t *testing.T) {
	d := runfiles.In(t.TempDir())
	require.NoError(t, os.MkdirAll(d.Chain("c1"), 0o700))
	for name, data := range map[string]string{
		"a newer version": `{"version": 3, "id": "c1"}`,
		"no steps":        `{"version": 1, "id": "c1", "status": "running", "current": 1, "plan": {"steps": []}}`,
		"a step too far":  `{"version": 1, "id": "c1", "status": "running", "current": 5, "plan": {"steps": [{"preset": "tdd"}]}}`,
		"another's id":    `{"version": 1, "id": "c2", "status": "running", "current": 1, "plan": {"steps": [{"preset": "tdd"}]}}`,
		"not JSON":        `{"version": 1,`,
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(d.ChainState("c1"), []byte(data), 0o600))
			_, err := chain.Load(d, "c1")
			var corrupt *chain.CorruptStateError
			require.ErrorAs(t, err, &corrupt)
			assert.Equal(t, d.ChainState("c1"), corrupt.Path)
		})
	}
	// current-chain is read from a file a repository may bring: a path
	// in it is not followed.
	require.NoError(t, os.WriteFile(d.CurrentChain(), []byte("../../etc\n"), 0o600))
	_, err := chain.Latest(d)
	require.ErrorIs(t, err, chain.ErrNoChain)
}

func TestNotesAreBoundedAndNeverReadThroughALink(t *testing.T) {
	ws := t.TempDir()
	step := runfiles.In(ws).ChainStep("c1", 1)
	require.NoError(t, os.MkdirAll(step.Path(), 0o700))

	notes, err := chain.ReadNotes(step)
	require.NoError(t, err)
	assert.Empty(t, notes, "no handoff.md: nothing to hand off")

	long := strings.Repeat("a line of notes\n", 4*chain.HandoffLimit/16)
	require.NoError(t, os.WriteFile(step.Handoff(), []byte("first\n"+long+"last\n"), 0o600))
	notes, err = chain.ReadNotes(step)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(notes), chain.HandoffLimit+64)
	assert.True(t, strings.HasPrefix(notes, "first\n"))
	assert.Contains(t, notes, "bytes cut")

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("do not send"), 0o600))
	require.NoError(t, os.Remove(step.Handoff()))
	require.NoError(t, os.Symlink(secret, step.Handoff()))
	_, err = chain.ReadNotes(step)
	require.Error(t, err)
}

func TestObjectiveCarriesTheChainsTextThePromptAndTheHandoff(t *testing.T) {
	plan := chain.Plan{Objective: "Make the parser sound.", Steps: []chain.Step{{Preset: "review"}, {Preset: "tdd", Prompt: "Fix what was found."}}}
	assert.Equal(t, "Make the parser sound.", chain.Objective(plan, 1, nil))
	got := chain.Objective(plan, 2, &chain.Handoff{N: 1, Label: "review", Payload: "two bugs", Notes: "see ```x```\n", NotesFile: ".ralph/chains/c/step-1/handoff.md"})
	assert.Equal(t, "Make the parser sound.\n\nFix what was found.\n\n"+
		"## From the previous step of this chain (step 1, review)\n\n"+
		"It completed with:\n\n```\ntwo bugs\n```\n\n"+
		"Its handoff notes (.ralph/chains/c/step-1/handoff.md):\n\n````\nsee ```x```\n````", got)
}

// fakeRunner plays each step's loop: it writes the checkpoint and log a
// loop would leave, ending as its script says.
type fakeRunner struct {
	t      *testing.T
	ends   map[int]fakeEnd // by step
	starts []chain.StepRun
}

type fakeEnd struct {
	reason runfiles.Reason
	code   int
	cost   float64
}

func (f *fakeRunner) RunStep(_ context.Context, run chain.StepRun) (int, error) {
	f.starts = append(f.starts, run)
	end := f.ends[run.N]
	rel, err := filepath.Rel(run.Dir.Workspace(), filepath.Join(run.Dir.Path(), "events-1.jsonl"))
	require.NoError(f.t, err)
	require.NoError(f.t, os.MkdirAll(run.Dir.Path(), 0o700))
	line := fmt.Sprintf(`{"topic":"LOOP_COMPLETE","payload":"step %d done","source":"agent"}`+"\n", run.N)
	require.NoError(f.t, os.WriteFile(filepath.Join(run.Dir.Path(), "events-1.jsonl"), []byte(line), 0o600))
	require.NoError(f.t, os.WriteFile(run.Dir.CurrentEvents(), []byte(rel), 0o600))
	st := runfiles.NewRunState()
	st.RunID, st.EventsFile, st.CostUSD = fmt.Sprintf("run-%d", run.N), rel, end.cost
	st.Usage = events.Usage{InputTokens: 10}
	st.Terminated = &runfiles.Termination{Reason: end.reason, ExitCode: end.code}
	require.NoError(f.t, runfiles.Checkpoint{Path: run.Dir.State()}.Save(st, runfiles.PhaseDone, time.Now()))
	return end.code, nil
}

type quiet struct{}

func (quiet) StepStarting(*chain.State, chain.StepRun) {}
func (quiet) StepEnded(*chain.State, chain.StepRecord) {}

func newChain(t *testing.T, steps int, budget chain.Budget, r chain.Runner) *chain.Chain {
	plan := chain.Plan{Objective: "go", Budget: budget}
	for i := range steps {
		plan.Steps = append(plan.Steps, chain.Step{Preset: fmt.Sprintf("p%d", i+1), CompletionTopic: "LOOP_COMPLETE"})
	}
	d := runfiles.In(t.TempDir())
	return &chain.Chain{Dir: d, State: chain.NewState("c1", plan, time.Now()), Runner: r, Reporter: quiet{}, Now: time.Now}
}

func TestChainRunsEveryStepPassingEachHandoff(t *testing.T) {
	done := fakeEnd{reason: runfiles.ReasonCompleted, cost: 0.1}
	r := &fakeRunner{t: t, ends: map[int]fakeEnd{1: done, 2: done, 3: done}}
	c := newChain(t, 3, chain.Budget{MaxCostUSD: 1}, r)
	require.NoError(t, c.Run(t.Context()))
	assert.Equal(t, chain.Completed, c.State.Status)
	require.Len(t, r.starts, 3)
	assert.Contains(t, r.starts[2].Objective, "step 2 done")
	assert.InDelta(t, 0.8, r.starts[2].Budget.MaxCostUSD, 1e-9, "what steps 1 and 2 left")
	assert.Contains(t, r.starts[1].Env, "RALPH_CHAIN_STEP=2")
}

func TestChainStopsBeforeAStepWhenTheBudgetIsSpent(t *testing.T) {
	done := fakeEnd{reason: runfiles.ReasonCompleted, cost: 0.5}
	r := &fakeRunner{t: t, ends: map[int]fakeEnd{1: done, 2: done, 3: done}}
	c := newChain(t, 3, chain.Budget{MaxCostUSD: 1}, r)
	require.NoError(t, c.Run(t.Context()))
	assert.Equal(t, chain.Stopped, c.State.Status)
	assert.Equal(t, 2, c.State.ExitCode)
	assert.Contains(t, c.State.Message, "spent (max_cost_usd 1 ($1.0000 spent)) before step 3 (p3)")
	assert.Len(t, r.starts, 2)

	r = &fakeRunner{t: t, ends: map[int]fakeEnd{1: done, 2: done}}
	c = newChain(t, 3, chain.Budget{MaxSteps: 1}, r)
	require.NoError(t, c.Run(t.Context()))
	assert.Equal(t, 2, c.State.ExitCode)
	assert.Len(t, r.starts, 1)
}

func TestChainStopsWithTheExitStatusOfAStepThatDidNotComplete(t *testing.T) {
	r := &fakeRunner{t: t, ends: map[int]fakeEnd{1: {reason: runfiles.ReasonStuck, code: 1}}}
	c := newChain(t, 2, chain.Budget{}, r)
	require.NoError(t, c.Run(t.Context()))
	assert.Equal(t, chain.Stopped, c.State.Status)
	assert.Equal(t, 1, c.State.ExitCode)
	assert.Contains(t, c.State.Message, "step 1 (p1) ended without completing (stuck, exit status 1)")
}

func TestChainInterruptedResumesTheStepItWasIn(t *testing.T) {
	r := &fakeRunner{t: t, ends: map[int]fakeEnd{1: {reason: runfiles.ReasonCompleted}, 2: {reason: runfiles.ReasonInterrupted, code: 130}}}
	c := newChain(t, 2, chain.Budget{}, r)
	require.NoError(t, c.Run(t.Context()))
	assert.Equal(t, chain.Running, c.State.Status, "left to resume")
	assert.Equal(t, 130, c.State.ExitCode)
	assert.Equal(t, 2, c.State.Current)

	loaded, err := chain.Latest(c.Dir)
	require.NoError(t, err)
	r.ends[2] = fakeEnd{reason: runfiles.ReasonCompleted}
	resumed := &chain.Chain{Dir: c.Dir, State: loaded, Runner: r, Reporter: quiet{}, Now: time.Now}
	require.NoError(t, resumed.Run(t.Context()))
	assert.Equal(t, chain.Completed, loaded.Status)
	require.Len(t, r.starts, 3)
	assert.Equal(t, 2, r.starts[2].N)
	assert.True(t, r.starts[2].Resume)
	assert.Empty(t, r.starts[2].Objective, "a resumed loop keeps its objective")
	assert.Equal(t, 1, loaded.Record(2).Resumes)
}

func TestReopenCutShortGoesOnWhereAStepsLoopCould(t *testing.T) {
	stoppedBy := func(reason runfiles.Reason, code int) *chain.State {
		st := &chain.State{Status: chain.Stopped, ExitCode: code, Current: 1,
			Plan:  chain.Plan{Steps: []chain.Step{{Preset: "tdd"}, {Preset: "review"}}},
			Steps: []chain.StepRecord{{N: 1, Status: chain.Stopped, RunID: "r1", ExitCode: code, Reason: string(reason)}}}
		return st
	}
	for _, r := range []runfiles.Reason{runfiles.ReasonStopped, runfiles.ReasonFatal, runfiles.ReasonConsecutiveFailures} {
		st := stoppedBy(r, 1)
		require.True(t, st.ReopenCutShort(), r)
		assert.Equal(t, chain.Running, st.Status)
		assert.Equal(t, chain.Running, st.Steps[0].Status)
		assert.Zero(t, st.ExitCode)
	}
	for _, r := range []runfiles.Reason{runfiles.ReasonCancelled, runfiles.ReasonStuck, runfiles.ReasonMaxIterations} {
		st := stoppedBy(r, 1)
		assert.False(t, st.ReopenCutShort(), r)
		assert.Equal(t, chain.Stopped, st.Status)
	}
	assert.False(t, stoppedBy(runfiles.ReasonMaxCost, 2).ReopenCutShort(), "a limit waits for a larger one")
	assert.True(t, stoppedBy("", 3).ReopenCutShort(), "a step whose loop could not record its end")
	assert.False(t, (&chain.State{Status: chain.Completed}).ReopenCutShort())
}

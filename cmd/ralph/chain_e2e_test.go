package main

// End-to-end tests of `ralph chain run`: the real binary runs each step as
// a child `ralph loop` whose agent is the scripted one, speaking Claude
// Code's stream (claudeStream) so that each iteration reports a cost.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
)

// chainStepConfig is a one-hat loop that completes on its hat's claim.
func chainStepConfig(hat string) string {
	return fmt.Sprintf(`event_loop:
  starting_event: task.start
  completion_confirmations: 1
  max_iterations: 3
  max_consecutive_failures: 1
hats:
  %s:
    name: %s
    triggers: [task.start]
    publishes: [LOOP_COMPLETE]
    instructions: Do your part, then publish LOOP_COMPLETE.
cli:
  backend: claude
  command: %s
`, hat, hat, agentBin)
}

// chainWorkspace has step1.yml (hat scout) and step2.yml (hat fixer).
func chainWorkspace(t *testing.T, chains string) *workspace {
	w := newWorkspace(t)
	w.write("step1.yml", chainStepConfig("scout"))
	w.write("step2.yml", chainStepConfig("fixer"))
	w.write("ralph.yml", chainStepConfig("unused")+chains)
	return w
}

// scoutStep writes the handoff and completes, for a cent.
func (w *workspace) scoutStep() step {
	return step{Sh: `printf 'the parser drops token-7f3a on empty lines\n' > "$RALPH_STEP_DIR/handoff.md"`,
		PrintFile: w.claudeStream("scout.jsonl", "Scouted. "+tag("LOOP_COMPLETE", "scouted: one bug in the parser"), 100)}
}

// startChainHeldInStep2 starts `ralph chain run step1.yml,step2.yml` in a
// chainWorkspace and returns once step 2's agent runs: the scout completes,
// and the fixer's first iteration holds step 2 until the test stops, kills
// or interrupts the chain. fixerThen are the fixer's iterations after that
// one, for a chain that is resumed.
func (w *workspace) startChainHeldInStep2(fixerThen ...step) (*exec.Cmd, *lockedWriter) {
	w.t.Helper()
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": append([]step{{Sh: `touch fixer-started`, SleepMS: 120000}}, fixerThen...),
	}})
	cmd, stderr := w.startRalph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	waitFor(w.t, "step 2's agent to start", func() bool {
		_, err := os.Stat(filepath.Join(w.dir, "fixer-started"))
		return err == nil
	})
	return cmd, stderr
}

// fixerCompletes is the fixer's iteration that completes step 2, for a cent.
func (w *workspace) fixerCompletes() step {
	return step{PrintFile: w.claudeStream("fixer.jsonl", "Fixed. "+tag("LOOP_COMPLETE", "fixed"), 100)}
}

func latestChain(t *testing.T, w *workspace) *chain.State {
	t.Helper()
	st, err := chain.Latest(runfiles.In(w.dir))
	require.NoError(t, err)
	return st
}

// keptPrompt is the prompt of step n's loop's first iteration, as it kept it.
func keptPrompt(t *testing.T, w *workspace, st *chain.State, n int) string {
	t.Helper()
	rec := st.Record(n)
	require.NotNil(t, rec)
	data, err := os.ReadFile(filepath.Join(runfiles.In(w.dir).ChainStep(st.ID, n).Run(rec.RunID), runfiles.Prompt(1, 1)))
	require.NoError(t, err)
	return string(data)
}

func TestChainHandsOffFromStepToStep(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, "")
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": {{Sh: `printf 'step=%s run=%s\n' "$RALPH_CHAIN_STEP" "$RALPH_CHAIN_RUN" > fixer-env.txt`,
			PrintFile: w.claudeStream("fixer.jsonl", "Fixed. "+tag("LOOP_COMPLETE", "fixed"), 100)}},
	}})

	r := w.ralph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.", "--json")
	require.Equal(t, 0, r.code, r.stderr)

	st := latestChain(t, w)
	assert.Equal(t, chain.Completed, st.Status)
	require.Len(t, st.Steps, 2)
	prompt := keptPrompt(t, w, st, 2)
	assert.Contains(t, prompt, "Make the parser sound.", "the chain's objective")
	assert.Contains(t, prompt, "token-7f3a", "step 1's handoff.md")
	assert.Contains(t, prompt, "scouted: one bug in the parser", "step 1's completion payload")
	assert.NotContains(t, keptPrompt(t, w, st, 1), "token-7f3a")
	assert.Equal(t, fmt.Sprintf("step=2 run=%s\n", st.ID), w.read("fixer-env.txt"))

	// Each step's loop kept its files in its own directory, none in .ralph/.
	for n := 1; n <= 2; n++ {
		assert.FileExists(t, runfiles.In(w.dir).ChainStep(st.ID, n).State())
	}
	assert.NoFileExists(t, runfiles.In(w.dir).State())

	var out chain.State
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, st.ID, out.ID)
	assert.InDelta(t, 0.02, out.Spent().CostUSD, 1e-9)
	assert.Contains(t, r.stderr, "all 2 steps completed")

	// ralph serve's dashboard shows step 2's loop, and where the chain is.
	srv := startServe(t, w.dir)
	var board struct {
		Loop struct {
			RunID string               `json:"run_id"`
			Hat   string               `json:"hat"`
			Chain *runfiles.ChainPlace `json:"chain"`
		} `json:"loop"`
	}
	srv.getJSON("/api/dashboard", &board)
	assert.Equal(t, st.Record(2).RunID, board.Loop.RunID)
	require.NotNil(t, board.Loop.Chain)
	assert.Equal(t, "chain "+st.ID+": step 2/2 (step2.yml), completed", board.Loop.Chain.Where)
}

func TestChainStopsWhenItsCostBudgetIsSpent(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, `chains:
  review-then-fix:
    steps: [step1.yml, step2.yml]
    budget: {max_cost_usd: 0.015}
`)
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		// The fixer never completes: only the budget ends it.
		"fixer": {{PrintFile: w.claudeStream("fixer.jsonl", "Still fixing.", 100)}},
	}})

	r := w.ralph("chain", "run", "review-then-fix")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "no objective for the chain's first step")
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "chains"), "refused before anything ran")

	r = w.ralph("chain", "run", "review-then-fix", "-p", "Make the parser sound.")
	require.Equal(t, 2, r.code, "the limit's exit status; stderr:\n%s", r.stderr)
	st := latestChain(t, w)
	assert.Equal(t, chain.Stopped, st.Status)
	assert.Equal(t, 2, st.ExitCode)
	assert.Contains(t, st.Message, "the chain's budget is spent (max_cost_usd 0.015")
	require.Len(t, st.Steps, 2)
	assert.Equal(t, chain.Completed, st.Steps[0].Status)
	assert.Equal(t, string(runfiles.ReasonMaxCost), st.Steps[1].Reason)
	assert.Equal(t, 2, w.agentRuns(), "step 2 stopped after the iteration that crossed the budget")
	assert.Contains(t, r.stderr, "the chain's budget is spent")
	assert.Contains(t, r.stderr, "step 2 (step2.yml): stopped, exit status 2")
}

func TestChainResumesAtTheStepItWasKilledIn(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		// Elsewhere the step's loop outlives the chain killed outright and
		// runs its sleeping agent out before the resume takes over.
		t.Skip("a step's loop is interrupted with its chain on Linux only (Pdeathsig)")
	}
	w := chainWorkspace(t, "")
	cmd, _ := w.startChainHeldInStep2(w.fixerCompletes())
	// While step 2 runs, the views show the chain and its step's loop.
	id := latestChain(t, w).ID
	where := "chain " + id + ": step 2/2 (step2.yml)"
	status := w.ralph("status")
	require.Equal(t, 0, status.code, status.stderr)
	assert.Contains(t, status.stdout, "running: yes")
	assert.Contains(t, status.stdout, where)
	assert.Contains(t, status.stdout, "hat: fixer")
	status = w.ralph("status", "--json")
	var s runfiles.Status
	require.NoError(t, json.Unmarshal([]byte(status.stdout), &s))
	require.NotNil(t, s.Chain)
	assert.Equal(t, runfiles.ChainPlace{ID: id, Step: 2, Steps: 2, Label: "step2.yml", Status: "running", Running: true, Where: where}, *s.Chain)
	evs := w.ralph("events")
	require.Equal(t, 0, evs.code, evs.stderr)
	assert.Contains(t, evs.stderr, where)
	assert.Contains(t, evs.stdout, "fixer")
	assert.NotContains(t, evs.stdout, "scout", "step 2's log, not step 1's")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	r := w.ralph("chain", "resume")
	require.Equal(t, 0, r.code, r.stderr)
	st := latestChain(t, w)
	assert.Equal(t, chain.Completed, st.Status)
	assert.Equal(t, 0, st.Steps[0].Resumes, "step 1 was not run again")
	assert.Equal(t, 1, st.Steps[1].Resumes)
	assert.Equal(t, 3, w.agentRuns(), "scout once, the fixer cut off, the fixer again")
	assert.Contains(t, r.stderr, "resuming chain "+st.ID+" at step 2/2 (step2.yml)")
	// The same run of step 2 went on: one log, resumed.
	logs, err := runfiles.EventLogs(runfiles.In(w.dir).ChainStep(st.ID, 2).Path())
	require.NoError(t, err)
	assert.Len(t, logs, 1)

	status = w.ralph("status")
	assert.Contains(t, status.stdout, where+", completed")
	assert.Contains(t, status.stdout, "running: no")
	watch := w.ralph("watch", "--once")
	require.Equal(t, 0, watch.code, watch.stderr)
	assert.Contains(t, watch.stdout, where+", completed")
	assert.Contains(t, watch.stdout, "LOOP_COMPLETE")
}

func TestChainDryRunShowsThePlanAndStartsNothing(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, `chains:
  review-then-fix:
    steps:
      - step1.yml
      - {preset: tdd, prompt: Fix what the scout found.}
    budget: {max_steps: 2, max_cost_usd: 1.5}
`)
	r := w.ralph("chain", "run", "review-then-fix", "-p", "Make the parser sound.", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"chain review-then-fix: 2 steps",
		"budget: max_steps 2, max_cost_usd 1.5",
		"objective: Make the parser sound.",
		"step 1: step1.yml (config)",
		"  hats: scout",
		"step 2: tdd (preset)",
		"its prompt: Fix what the scout found.",
		"step 1's completion payload and handoff.md",
		"nothing started (--dry-run)",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NoDirExists(t, filepath.Join(w.dir, ".ralph", "chains"))
	assert.Equal(t, 0, w.agentRuns())
}

func TestChainRefusesBadStepsBeforeRunningAny(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, `chains:
  broken:
    steps: [step1.yml, tddd]
`)
	r := w.ralph("chain", "run", "broken")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, `unknown step "tddd" at `)
	assert.Contains(t, r.stderr, `ralph.yml:17: no preset and no config file of that name; did you mean "tdd"?`)

	// ralph validate finds the same, where it is written.
	r = w.ralph("validate")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, `ralph.yml:17: chains.broken: unknown step "tddd"`)
	assert.Contains(t, r.stderr, `chains.broken: unknown step "tddd"`)

	r = w.ralph("chain", "run", "step1.yml,missing.yml")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, `step "missing.yml" on the command line: no such config file`)

	w.write("ralph.yml", chainStepConfig("unused")+"chains:\n  zero: {steps: [tdd], budget: {max_cost_usd: 0}}\n")
	r = w.ralph("chain", "run", "zero")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "chains.zero.budget.max_cost_usd must be positive")
	assert.Equal(t, 0, w.agentRuns())
	assert.True(t, strings.Contains(r.stderr, "ralph.yml:"), r.stderr)
}

// TestChainStopsWhereRalphStopStopsItsStep: `ralph stop` stops the chain
// at its step, whose end says to go on with the chain's resume, which does.
func TestChainStopsWhereRalphStopStopsItsStep(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, "")
	cmd, stderr := w.startChainHeldInStep2(w.fixerCompletes())
	r := w.ralph("stop", "--now")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, exitCodeOf(cmd.Wait()), stderr.String())
	st := latestChain(t, w)
	assert.Equal(t, chain.Stopped, st.Status)
	assert.Equal(t, string(runfiles.ReasonStopped), st.Steps[1].Reason)
	assert.Contains(t, st.Message, "step 2 (step2.yml) ended without completing (stopped, exit status 1)")
	assert.Contains(t, stderr.String(), "Resume with `ralph chain resume`")
	assert.Contains(t, stderr.String(), "ralph: hint: go on with `ralph chain resume`", "the chain's own end says so too")
	assert.NotContains(t, stderr.String(), "ralph loop --resume")

	r = w.ralph("chain", "resume")
	require.Equal(t, 0, r.code, r.stderr)
	st = latestChain(t, w)
	assert.Equal(t, chain.Completed, st.Status)
	assert.Equal(t, 1, st.Steps[1].Resumes)
	assert.Equal(t, 3, w.agentRuns(), "the scout once, the fixer stopped, then again")
}

// TestChainStepsWriteFailureSaysToResumeTheChain: a step's loop that could
// not write its files (a full disk) names the chain's resume in its hint,
// and once the disk has room the chain's resume finishes the step and the
// chain.
func TestChainStepsWriteFailureSaysToResumeTheChain(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, "")
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": {w.fixerCompletes()},
	}})
	r := w.ralphEnv([]string{writeFaultEnv + "=eventlog:4:ENOSPC"}, "chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	require.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, "cannot append to the event log")
	assert.Contains(t, r.stderr, "then continue the run with `ralph chain resume`")
	assert.NotContains(t, r.stderr, "ralph loop --resume")
	st := latestChain(t, w)
	assert.Equal(t, chain.Stopped, st.Status)
	assert.Empty(t, st.Steps[0].Reason, "its loop could not record its end")

	r = w.ralph("chain", "resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, chain.Completed, latestChain(t, w).Status)
}

func TestChainInterruptedGoesOnWithResume(t *testing.T) {
	t.Parallel()
	w := chainWorkspace(t, "")
	cmd, stderr := w.startChainHeldInStep2(w.fixerCompletes())
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, 130, exitCodeOf(cmd.Wait()), stderr.String())
	assert.Contains(t, stderr.String(), "step 2 (step2.yml) was interrupted; resume the chain with `ralph chain resume`")
	// The step's loop's own end says so too: its chain resumes it.
	assert.Contains(t, stderr.String(), "Resume with `ralph chain resume`")
	assert.NotContains(t, stderr.String(), "ralph loop --resume")
	st := latestChain(t, w)
	assert.Equal(t, chain.Running, st.Status)
	assert.Equal(t, string(runfiles.ReasonInterrupted), st.Steps[1].Reason)

	r := w.ralph("chain", "run", "--resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, chain.Completed, latestChain(t, w).Status)
	assert.Equal(t, 3, w.agentRuns())
	r = w.ralph("chain", "resume")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stderr, "ended already (completed, exit status 0)")
}

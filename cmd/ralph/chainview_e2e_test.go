package main

// End-to-end tests of a chain as every command sees it: its steps' runs
// listed, read, added up and checked beside the workspace's own; a plain
// loop refused beside it; its resume with a new budget; and ralph watch
// following it from step to step.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// completedChain runs step1.yml,step2.yml to completion and returns its
// state.
func completedChain(t *testing.T, w *workspace) *chain.State {
	t.Helper()
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": {w.fixerCompletes()},
	}})
	r := w.ralph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	require.Equal(t, 0, r.code, r.stderr)
	st := latestChain(t, w)
	require.Len(t, st.Steps, 2)
	return st
}

func TestChainStepRunsAreSeenByRunsEventsInspectAndStats(t *testing.T) {
	w := chainWorkspace(t, "")
	st := completedChain(t, w)
	scout, fixer := st.Record(1).RunID, st.Record(2).RunID

	// A link planted where a chain's step belongs is never followed.
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "events-20261128-000000.jsonl"), []byte(
		`{"ts":"2026-11-28T00:00:00Z","topic":"loop.started","payload":{"run_id":"planted-outside"},"source":"ralph"}`+"\n"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(runfiles.In(w.dir).Chain(st.ID), "step-3")))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.dir, ".ralph", "chains", "planted-chain")))

	r := w.ralph("runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var runs []runfiles.RunOnDisk
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &runs), r.stdout)
	require.Len(t, runs, 2, "the steps' runs, and nothing through a link: %s", r.stdout)
	for i, id := range []string{scout, fixer} {
		assert.Equal(t, id, runs[i].RunID)
		assert.Equal(t, st.ID, runs[i].Chain)
		assert.Equal(t, i+1, runs[i].Step)
		assert.Equal(t, "completed", runs[i].Ended)
		assert.Equal(t, filepath.Join(".ralph", "chains", st.ID, fmt.Sprintf("step-%d", i+1), "runs", id), runs[i].Dir)
		assert.Positive(t, runs[i].Bytes)
	}
	r = w.ralph("runs")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "CHAIN")
	assert.Contains(t, r.stdout, st.ID+" step 2")
	assert.NotContains(t, r.stdout, "planted-outside")
	r = w.ralph("runs", "clean", "--max-age", "1s", "--dry-run")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "would remove "+scout, "a chain keeps its steps' runs")

	r = w.ralph("events", "--runs", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"chain":"`+st.ID+`","step":1`)

	// A step's run is read by its id, as any run is.
	r = w.ralph("events", "--run", scout)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "scout")
	assert.NotContains(t, r.stdout, "fixer")
	r = w.ralph("events", "--run", "planted-outside")
	assert.Equal(t, 3, r.code, "a run behind a link is no run: %s", r.stdout)

	r = w.ralph("inspect", "prompt", "1", "--run", fixer)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "token-7f3a", "step 2's prompt carries step 1's handoff")
	r = w.ralph("inspect", "output", "1", "--run", scout, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Scouted.")
	assert.Contains(t, r.stdout, filepath.ToSlash(filepath.Join(".ralph", "chains", st.ID, "step-1", "runs", scout)))
	// Without --run: the current step's (the chain ran last here).
	r = w.ralph("inspect", "prompt", "1")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "token-7f3a")

	r = w.ralph("stats", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var stats view.Stats
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &stats))
	assert.Equal(t, 2, stats.Total.Runs)
	require.Len(t, stats.Chains, 1)
	assert.Equal(t, st.ID, stats.Chains[0].Name)
	assert.Equal(t, 2, stats.Chains[0].Runs)
	assert.Equal(t, 2, stats.Chains[0].Endings["completed"])
	assert.InDelta(t, 0.02, stats.Chains[0].CostUSD, 1e-9)
	r = w.ralph("stats")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "CHAIN")
}

// TestChainRefusesAPlainLoopBesideIt: while a chain runs, a plain loop in
// its workspace is refused with the chain's name, its pid and how to stop
// it, and a chain is refused beside a plain loop; the chain's own steps run.
func TestChainRefusesAPlainLoopBesideIt(t *testing.T) {
	w := chainWorkspace(t, "")
	cmd, stderr := w.startChainHeldInStep2()
	id := latestChain(t, w).ID
	for _, args := range [][]string{{"loop", "-p", "Something else."}, {"loop", "--resume"}} {
		r := w.ralph(args...)
		assert.Equal(t, 3, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, fmt.Sprintf("chain %s runs in this workspace (pid %d", id, cmd.Process.Pid))
		assert.Contains(t, r.stderr, "step 2/2 (step2.yml)")
		assert.Contains(t, r.stderr, "`ralph stop`")
	}
	assert.Equal(t, 2, w.agentRuns(), "the refused loops ran no agent")

	r := w.ralph("stop", "--now")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, exitCodeOf(cmd.Wait()), stderr.String())

	// And the other way round: a chain is refused beside a plain loop.
	w.write("loop.yml", chainStepConfig("solo"))
	w.script(agentScript{ByHat: map[string][]step{"solo": {{Sh: `touch solo-started`, SleepMS: 120000}}}})
	loop, loopErr := w.startRalph("loop", "-c", "loop.yml", "-p", "Work alone.")
	waitFor(t, "the plain loop's agent to start", func() bool {
		_, err := os.Stat(filepath.Join(w.dir, "solo-started"))
		return err == nil
	})
	r = w.ralph("chain", "run", "step1.yml", "-p", "Another chain.")
	assert.Equal(t, 3, r.code, r.stderr)
	assert.Contains(t, r.stderr, fmt.Sprintf("a loop runs in this workspace (pid %d", loop.Process.Pid))
	r = w.ralph("stop", "--now")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, exitCodeOf(loop.Wait()), loopErr.String())
}

// TestChainResumesWithALargerBudget: a chain its cost budget stopped says,
// in its step's own end, how to go on; `ralph chain resume --max-cost-usd`
// replaces the budget, recorded in chain.json, and the step's loop goes on
// where it stopped.
func TestChainResumesWithALargerBudget(t *testing.T) {
	w := chainWorkspace(t, `chains:
  review-then-fix:
    steps: [step1.yml, step2.yml]
    budget: {max_cost_usd: 0.015}
`)
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {w.scoutStep()},
		"fixer": {{PrintFile: w.claudeStream("fixing.jsonl", "Still fixing.", 100)}},
		// The resumed loop's next iteration: its fixer handled task.start.
		"ralph": {{PrintFile: w.claudeStream("fixed.jsonl", "Fixed. "+tag("LOOP_COMPLETE", "fixed"), 100)}},
	}})
	r := w.ralph("chain", "run", "review-then-fix", "-p", "Make the parser sound.")
	require.Equal(t, 2, r.code, r.stderr)
	assert.Contains(t, r.stderr, "to go on, raise it on the chain's resume: `ralph chain resume --max-cost-usd USD`")
	assert.NotContains(t, r.stderr, "ralph loop --resume", "a step is resumed by its chain")

	r = w.ralph("chain", "resume")
	assert.Equal(t, 2, r.code, "without a new budget it stays stopped: %s", r.stderr)
	assert.Contains(t, r.stderr, "ended already")

	r = w.ralph("chain", "resume", "--max-cost-usd", "-1")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "--max-cost-usd -1")

	r = w.ralph("chain", "resume", "--max-cost-usd", "0.05", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "budget is now max_cost_usd 0.05 (was max_cost_usd 0.015)")
	assert.Contains(t, r.stderr, "resuming chain")
	st := latestChain(t, w)
	assert.Equal(t, chain.Completed, st.Status)
	assert.Equal(t, 0.05, st.Plan.Budget.MaxCostUSD)
	require.Len(t, st.BudgetChanges, 1)
	assert.Equal(t, 0.015, st.BudgetChanges[0].From.MaxCostUSD)
	assert.Equal(t, 1, st.Steps[1].Resumes)
	assert.InDelta(t, 0.03, st.Spent().CostUSD, 1e-9)
	assert.Equal(t, 3, w.agentRuns(), "the scout once, the fixer cut off by the budget, then again")
	logs, err := runfiles.EventLogs(runfiles.In(w.dir).ChainStep(st.ID, 2).Path())
	require.NoError(t, err)
	assert.Len(t, logs, 1, "step 2's run went on")
	var version struct {
		Version int `json:"version"`
	}
	require.NoError(t, json.Unmarshal([]byte(w.read(filepath.Join(".ralph", "chains", st.ID, "chain.json"))), &version))
	assert.Equal(t, 2, version.Version)

	r = w.ralph("chain", "resume", "--max-cost-usd", "1")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "a new budget does not change that")
}

// TestWatchFollowsAChainFromStepToStep: plain `ralph watch` (its stdout a
// pipe), started before the chain, follows step 1's log, goes on to step
// 2's, and ends with the chain.
func TestWatchFollowsAChainFromStepToStep(t *testing.T) {
	w := chainWorkspace(t, "")
	scout := w.scoutStep()
	scout.Sh = `touch scout-started; while [ ! -e go ]; do sleep 0.05; done; ` + scout.Sh
	w.script(agentScript{ByHat: map[string][]step{
		"scout": {scout},
		"fixer": {{PrintFile: w.claudeStream("fixer.jsonl", "Fixed. "+tag("LOOP_COMPLETE", "fixed-token-91c"), 100)}},
	}})
	watch, out := w.startWatch()
	waitFor(t, "watch to wait for a run", func() bool { return strings.Contains(out.String(), "waiting for one to start") })
	chainCmd, chainErr := w.startRalph("chain", "run", "step1.yml,step2.yml", "-p", "Make the parser sound.")
	waitFor(t, "watch to show step 1", func() bool { return strings.Contains(out.String(), "iteration.started") })
	w.write("go", "")
	require.Equal(t, 0, exitCodeOf(chainCmd.Wait()), chainErr.String())
	require.Equal(t, 0, exitCodeOf(watch.Wait()), "watch ends with the chain; it printed:\n%s", out.String())
	id := latestChain(t, w).ID
	assert.Contains(t, out.String(), "chain "+id+": step 2/2 (step2.yml), in "+filepath.Join(".ralph", "chains", id, "step-2"))
	assert.Contains(t, out.String(), "scouted: one bug in the parser", "step 1's events")
	assert.Contains(t, out.String(), "fixed-token-91c", "step 2's events")
	assert.Contains(t, out.String(), "the chain has ended")
}

// startWatch starts plain `ralph watch` (its stdout a pipe), its output
// collected.
func (w *workspace) startWatch() (*exec.Cmd, *lockedWriter) {
	w.t.Helper()
	cmd := exec.Command(ralphBin, "watch")
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "TERM=dumb")
	out := &lockedWriter{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(w.t, cmd.Start())
	w.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, out
}

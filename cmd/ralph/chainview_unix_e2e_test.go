//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// TestDoctorChecksTheStepsOfAChainKilledOutright: after a chain is killed
// with SIGKILL, ralph doctor finds its locks left behind, its step cut off
// (resumed by `ralph chain resume`, not a loop's) and an agent left
// running by a step's loop, in the step's directory; --fix clears the
// locks, and the chain resumes.
func TestDoctorChecksTheStepsOfAChainKilledOutright(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a step's loop is interrupted with its chain on Linux only (Pdeathsig)")
	}
	w := chainWorkspace(t, "")
	cmd, _ := w.startChainHeldInStep2(w.fixerCompletes())
	st := latestChain(t, w)
	step1, step2 := runfiles.In(w.dir).ChainStep(st.ID, 1), runfiles.In(w.dir).ChainStep(st.ID, 2)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	waitFor(t, "step 2's loop to end", func() bool {
		held, _ := runfiles.LockHeld(step2.Lock())
		return !held
	})
	// An agent a step's loop left running: a process group of its own.
	victim := exec.Command("sleep", "300")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, victim.Start())
	t.Cleanup(func() { _ = syscall.Kill(-victim.Process.Pid, syscall.SIGKILL); _ = victim.Wait() })
	require.NoError(t, os.WriteFile(step1.AgentPID(), fmt.Appendf(nil, "%d\n", victim.Process.Pid), 0o600))

	rep := doctorState(t, w)
	var stale []string
	for _, f := range findingsOf(rep, view.FindingStaleLock) {
		stale = append(stale, f.Path)
	}
	assert.ElementsMatch(t, []string{filepath.Join(".ralph", "loop.lock"), filepath.Join(".ralph", "chains", "chain.lock")}, stale)
	unfinished := findingsOf(rep, view.FindingUnfinishedRun)
	require.Len(t, unfinished, 1, "%+v", rep.Findings)
	assert.Contains(t, unfinished[0].What, fmt.Sprintf(", step 2 of chain %s, was cut off (interrupted", st.ID))
	assert.Contains(t, unfinished[0].Fix, "ralph chain resume")
	left := findingsOf(rep, view.FindingAgentLeft)
	require.Len(t, left, 1, "%+v", rep.Findings)
	assert.Equal(t, filepath.Join(".ralph", "chains", st.ID, "step-1", "agent.pgid"), left[0].Path)
	assert.Contains(t, left[0].What, fmt.Sprintf("process group %d, the agent of step 1 of chain %s", victim.Process.Pid, st.ID))

	rep = doctorState(t, w, "--fix")
	assert.Len(t, findingsOf(rep, view.FindingStaleLock), 2)
	assert.Empty(t, findingsOf(doctorState(t, w), view.FindingStaleLock), "cleared")

	require.NoError(t, os.WriteFile(step1.AgentPID(), nil, 0o600))
	r := w.ralph("chain", "resume")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, chain.Completed, latestChain(t, w).Status)
	assert.Empty(t, findingsOf(doctorState(t, w), view.FindingUnfinishedRun))
}

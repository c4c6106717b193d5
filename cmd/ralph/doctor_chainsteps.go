package main

import (
	"fmt"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
)

// chainSteps checks the chains' files as locks and leftAgent check the
// workspace's own loop: a chain's steps each run a loop whose lock and
// agent.pgid live in the step's directory, and a chain killed outright
// leaves them as a killed loop leaves its own.
func (c *stateChecker) chainSteps() {
	steps, err := runfiles.ChainStepDirs(c.ws)
	if err != nil {
		c.rep.Skipped = append(c.rep.Skipped, "the chains' steps: "+err.Error())
		return
	}
	if len(steps) == 0 {
		return
	}
	c.staleLock(runfiles.In(c.ws).ChainLock())
	for _, s := range steps {
		c.staleLock(s.Dir.Lock())
		c.stepAgentLeft(s)
	}
}

// stepAgentLeft finds the process groups of a step's agents (its wave
// workers' too) that a killed step's loop left running.
func (c *stateChecker) stepAgentLeft(s runfiles.ChainStepDir) {
	if held, _ := runfiles.LockHeld(s.Dir.Lock()); held {
		return
	}
	for _, left := range runfiles.LeftAgentsIn(s.Dir) {
		if !groupAlive(left.PGID) {
			continue
		}
		c.add(view.StateFinding{Kind: view.FindingAgentLeft, Path: c.rel(left.Path),
			What: fmt.Sprintf("process group %d, the agent of step %d of chain %s, still runs while no ralph runs that step: a ralph that was killed left it", left.PGID, s.Step, s.Chain),
			Fix:  fmt.Sprintf("`ralph chain resume` stops it first, once it has made sure it is the step's agent; or stop it yourself: `kill -TERM -%d`", left.PGID)}, nil)
	}
}

// unfinishedStep finds a chain step's run that was cut off (killed, or
// interrupted with its chain) while its chain is still to go on and
// nothing runs it: the chain, not a loop, resumes it.
func (c *stateChecker) unfinishedStep(r runfiles.RunListing) {
	if r.Ended != "unfinished" && r.Ended != string(runfiles.ReasonInterrupted) {
		return
	}
	d := runfiles.In(c.ws)
	if held, _ := runfiles.LockHeld(d.ChainLock()); held {
		return // the chain runs, and resumes its step itself
	}
	st, err := chain.Load(d, r.Chain)
	if err != nil || st.Ended() || st.Current != r.Step {
		return
	}
	c.add(view.StateFinding{Kind: view.FindingUnfinishedRun, Path: r.Log,
		What: fmt.Sprintf("run %s, step %d of chain %s, was cut off (%s: ralph was killed or interrupted, or the machine went down) and nothing runs it", r.RunID, r.Step, r.Chain, r.Ended),
		Fix:  "`ralph chain resume` goes on with the chain at that step"}, nil)
}

package engine

import "github.com/ralph-loop/ralph/runfiles"

// terminating records the end of the run.
func (e *Engine) terminating() (runfiles.Phase, error) {
	t := e.ending
	if t == nil {
		t = e.terminate(runfiles.ReasonFatal, "the loop ended without a reason")
	}
	st := e.st
	if err := e.append(runfiles.RalphEvent(runfiles.TopicLoopTerminate, runfiles.TerminateRecord{
		Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message, Cause: t.Cause, GoOn: t.GoOn, Iterations: st.Iteration,
		CostUSD: st.CostUSD, CostSource: st.Cost().Source(), CostUnknown: st.CostUnknown, Tokens: st.Usage.Total(), RuntimeMS: st.Runtime(e.now()).Milliseconds(),
	})); err != nil {
		return "", err
	}
	if err := e.saveAs(runfiles.PhaseDone); err != nil {
		return "", err
	}
	if sr, ok := e.opts.Reporter.(StuckReporter); ok && t.Reason == runfiles.ReasonStuck {
		sr.Stuck(*t, st.NoProgress)
	}
	sum := e.summary()
	e.writeSummary(sum)
	e.opts.Reporter.LoopFinished(sum)
	return runfiles.PhaseDone, nil
}

package engine

// terminating records the end of the run.
func (e *Engine) terminating() (Phase, error) {
	t := e.ending
	if t == nil {
		t = e.terminate(ReasonFatal, "the loop ended without a reason")
	}
	st := e.st
	if err := e.append(ralphEvent(TopicLoopTerminate, terminateRecord{
		Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message, Cause: t.Cause, GoOn: t.GoOn, Iterations: st.Iteration,
		CostUSD: st.CostUSD, CostSource: st.Cost().Source(), CostUnknown: st.CostUnknown, Tokens: st.Usage.Total(), RuntimeMS: st.Runtime(e.now()).Milliseconds(),
	})); err != nil {
		return "", err
	}
	if err := e.saveAs(PhaseDone); err != nil {
		return "", err
	}
	if sr, ok := e.opts.Reporter.(StuckReporter); ok && t.Reason == ReasonStuck {
		sr.Stuck(*t, st.NoProgress)
	}
	sum := e.summary()
	e.writeSummary(sum)
	e.opts.Reporter.LoopFinished(sum)
	return PhaseDone, nil
}

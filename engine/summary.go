package engine

import (
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Summary describes a finished run.
type Summary struct {
	RunID    string
	Reason   runfiles.Reason
	ExitCode int
	Message  string
	// Cause and GoOn are the termination's facts behind the message (see
	// Termination).
	Cause      runfiles.Cause
	GoOn       *runfiles.GoOn
	Iterations int
	// Confirmations is how many of the iterations confirmed a completion
	// claim; max_iterations does not count them.
	Confirmations int
	Runtime       time.Duration
	Cost          runfiles.CostTotal
	Usage         events.Usage
	// ByBackend is what each backend's iterations used, for a run whose
	// fallback chain moved it between backends (one entry otherwise).
	ByBackend   map[string]runfiles.BackendTotal
	Activations map[string]int
	Accepted    int
	Rejected    int
	Malformed   int
	Commits     int
	EventsFile  string
	Workspace   string
	// EndedAt is when the run ended; zero when it has not.
	EndedAt time.Time
	// Tasks and TasksDone count the SPEC's boxes and the checked ones, in
	// a SPEC-mode run; a run without a SPEC has one task, its objective,
	// done when the run completed.
	Tasks, TasksDone int
	// AlreadyEnded says the run had ended before this process began:
	// a resume found it over, ran nothing and wrote nothing.
	AlreadyEnded bool
}

func (e *Engine) summary() Summary {
	st := e.st
	if st == nil {
		return Summary{}
	}
	sum := Summary{RunID: st.RunID, Iterations: st.Iteration, Confirmations: st.ConfirmationIterations, Runtime: st.Runtime(e.now()),
		Cost: st.Cost(), Usage: st.Usage, ByBackend: st.ByBackend, Activations: st.Activations, Accepted: st.Accepted,
		Rejected: st.Rejected, Malformed: st.MalformedTotal, Commits: st.Commits, EventsFile: st.EventsFile, Workspace: e.opts.Workspace,
		AlreadyEnded: e.endedBefore}
	if t := st.Terminated; t != nil {
		sum.Reason, sum.ExitCode, sum.Message = t.Reason, t.ExitCode, e.opts.Redactor.String(t.Message)
		sum.Cause, sum.GoOn, sum.EndedAt = t.Cause, t.GoOn, t.At
	}
	sum.TasksDone, sum.Tasks = e.taskCounts(sum.Reason)
	return sum
}

// End is how the run ended, as its termination says it.
func (s Summary) End() runfiles.Termination {
	return runfiles.Termination{Reason: s.Reason, ExitCode: s.ExitCode, Message: s.Message, Cause: s.Cause, GoOn: s.GoOn, At: s.EndedAt}
}

// writeSummary writes .ralph/runs/<run-id>/summary.md as
// Options.SummaryFile renders it.
func (e *Engine) writeSummary(s Summary) {
	if e.opts.SummaryFile == nil {
		return
	}
	path := e.files().Summary(s.RunID)
	if err := ralphdir.WriteFileAtomic(e.dir, path, []byte(e.opts.SummaryFile(s))); err != nil {
		e.opts.Reporter.Warn("cannot write the run summary: " + err.Error())
	}
}

package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/runfiles"
)

// awaitingHuman waits for the answer to the pending question without
// polling: the log is watched for the answer's line, the stop file for a
// stop request, and a timer set to the deadline the log records (asked_at
// plus the timeout), so a resumed run waits for the same moment. A signal
// or a stop request goes back to checking, which ends the run as it would
// between any two iterations.
func (e *Engine) awaitingHuman(ctx context.Context) (runfiles.Phase, error) {
	q := *e.st.Question
	if err := e.saveAs(runfiles.PhaseAwaitingHuman); err != nil {
		return "", err
	}
	e.reportHuman(func(r HumanReporter) { r.WaitingForHuman(q) })
	changed, closeWatch, err := watchFile(e.events.Path())
	if err != nil {
		return "", err
	}
	defer closeWatch()
	deadline := deadlineTimer(q.Deadline, e.now())
	defer deadline.Stop()
	for {
		if err := e.fold(); err != nil {
			return "", err
		}
		if e.st.Question == nil || e.st.Question.ID != q.ID {
			e.reportAnswer(q)
			return runfiles.PhaseChecking, nil
		}
		select {
		case <-ctx.Done():
			return runfiles.PhaseChecking, nil
		case <-e.stop.Changed():
			return runfiles.PhaseChecking, nil
		case <-changed:
		case <-deadline.C:
			return e.timedOut(q)
		}
	}
}

// timedOut records that the deadline passed, in one write: the line
// closes the question and tells the hat that asked, as an answer would.
func (e *Engine) timedOut(q runfiles.Question) (runfiles.Phase, error) {
	onTimeout := e.opts.Settings.Human.OnTimeout
	if onTimeout == "" {
		onTimeout = OnTimeoutContinue
	}
	note := fmt.Sprintf("No answer came to your question %s within its time (asked %s, deadline %s). Decide without it, or ask again.",
		q.ID, q.AskedAt.UTC().Format(time.RFC3339), q.Deadline.UTC().Format(time.RFC3339))
	line := runfiles.RalphEvent(runfiles.TopicHumanTimedOut, runfiles.TimedOutRecord{ID: q.ID, Question: q.Text, OnTimeout: onTimeout, Note: note})
	line.Target = q.Hat
	if err := e.append(line); err != nil {
		return "", err
	}
	if e.reportAnswer(q) {
		// An answer written just before the time-out line: the fold
		// takes the first line that closes a question, so it stands.
		return runfiles.PhaseChecking, nil
	}
	e.reportHuman(func(r HumanReporter) { r.HumanAnswered(q, Reply{TimedOut: true}) })
	if onTimeout == OnTimeoutStop {
		e.ending = e.terminate(runfiles.ReasonNoAnswer, fmt.Sprintf("no answer to question %s (%s) by its deadline %s",
			q.ID, q.Text, q.Deadline.Local().Format(time.DateTime)))
		return runfiles.PhaseTerminating, nil
	}
	return runfiles.PhaseChecking, nil
}

// reportAnswer tells the reporter the answer to q, when the pending line
// that closed q is a person's answer, and reports whether it is.
func (e *Engine) reportAnswer(q runfiles.Question) bool {
	for i := len(e.st.Pending) - 1; i >= 0; i-- {
		ev := e.st.Pending[i].Event
		var r runfiles.AnsweredRecord
		if ev.Topic == runfiles.TopicHumanAnswered && runfiles.Decode(ev, &r) && r.ID == q.ID {
			e.reportHuman(func(rep HumanReporter) { rep.HumanAnswered(q, Reply{Text: r.Answer, By: r.By}) })
			return true
		}
	}
	return false
}

func (e *Engine) reportHuman(f func(HumanReporter)) {
	if r, ok := e.opts.Reporter.(HumanReporter); ok {
		f(r)
	}
}

// deadlineTimer fires at deadline; a zero deadline never fires.
func deadlineTimer(deadline, now time.Time) *time.Timer {
	if deadline.IsZero() {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return t
	}
	return time.NewTimer(max(deadline.Sub(now), 0))
}

// watchFile reports writes to the file at path on changed (one pending
// signal at most) until closed. A lost notification costs nothing: each
// wake-up folds the whole log past the offset.
func watchFile(path string) (changed <-chan struct{}, closeWatch func(), err error) {
	w, err := filewatch.New(filewatch.Options{Dirs: []string{filepath.Dir(path)}, Match: filewatch.Only(path), Writes: true})
	if err != nil {
		return nil, nil, err
	}
	return w.C(), w.Close, nil
}

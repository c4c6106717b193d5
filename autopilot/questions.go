package autopilot

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/filewatch"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// A task's agent may ask a person (`ralph ask`); its loop then waits in
// its worktree for the answer. Nobody watches a task's loop but the
// autopilot, so the autopilot follows each local loop's .ralph/ for the
// question it waits on and records it (task.asked) and its end
// (task.answered) in its own log: its output, progress.md, its hooks and
// `ralph events --autopilot` say which task waits, on what, and how to
// answer. `ralph autopilot status` reads the question from the loop itself.

// questionSeen is what a task's loop waits on now: q, or nil for nothing.
type questionSeen struct {
	slot, task string
	q          *runfiles.Question
}

// followQuestions follows the loop of task, in slot, for the question it
// waits on, and tells the state machine when that changes; stop, called
// once the loop has ended, tells the last change and ends it.
// Only a loop in a worktree here can be followed: a remote task's loop
// waits on its worker, where its question is answered.
func (a *Autopilot) followQuestions(slot, task string) (stop func(), err error) {
	if a.runsOn() != "" {
		// This worktree's .ralph/ is not the loop's: there is nothing to
		// follow, and a watch on it costs a file watcher and the
		// autopilot's one goroutine tens of ms a task.
		return func() {}, nil
	}
	ws := a.worktree(task)
	dir := filepath.Join(ws, runfiles.DirName)
	// The loop makes its .ralph/ as it starts; it is made now so that its
	// first lines are not missed. Its .gitignore keeps it out of commits.
	if err := ralphdir.MkdirAll(dir, dir); err != nil {
		return nil, fmt.Errorf("follow the loop of %s: %w", task, err)
	}
	if err := runfiles.IgnoreOwnFilesIfMissing(dir); err != nil {
		return nil, fmt.Errorf("follow the loop of %s: %w", task, err)
	}
	changed, closeWatch, err := watchLogs(dir)
	if err != nil {
		return nil, fmt.Errorf("follow the loop of %s: %w", task, err)
	}
	last := ""
	if q := a.state().Active[slot].Question; q != nil {
		last = q.ID
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	tail := &questionTail{ws: ws}
	go func() {
		defer close(finished)
		for {
			// Read after the watch began, so a line written in between is
			// not missed; a loop that cannot be read yet has no question.
			if tail.due() {
				q, _ := runfiles.PendingQuestion(ws)
				if id := questionID(q); id != last {
					select {
					case a.questions <- questionSeen{slot: slot, task: task, q: q}:
						last = id
					case <-done:
					}
				}
			}
			select {
			case <-changed:
			case <-done:
				// The loop has ended: what it last waited on is said
				// before its end is (stop is called before the end is
				// reported, and the state machine takes both in turn).
				if q, _ := runfiles.PendingQuestion(ws); questionID(q) != last {
					a.questions <- questionSeen{slot: slot, task: task, q: q}
				}
				return
			}
		}
	}()
	return func() { close(done); closeWatch(); <-finished }, nil
}

// questionTail reads the new lines of a loop's log and says when the
// question the loop waits on may have changed, so that the question is
// read (the checkpoint and the log past it, which costs what the state
// file weighs) on the few lines that can change it, not on every line an
// agent emits.
type questionTail struct {
	ws     string
	path   string // the log read
	reader *events.Reader
	// asked says a human.asked line is not decided yet: the lines that
	// decide it (settling's, in one write) make a read due.
	asked bool
}

// due reads what was appended to the loop's current log since it was
// last called, and reports whether a read of the question is due: at
// the first look at a run's log, and on a line that asks, answers, times
// a question out, starts, resumes or ends the run, or decides an asked
// question.
func (t *questionTail) due() bool {
	path, err := runfiles.CurrentLog(t.ws)
	if err != nil {
		return false // no run yet: its current-events brings a look
	}
	if path != t.path {
		// A new run, or the first look: the question is read as the log
		// is now, and from then on its new lines say when to read again.
		t.path, t.reader, t.asked = path, events.NewReader(path, logSize(path)), false
		return true
	}
	recs, err := t.reader.Read()
	if err != nil {
		return true
	}
	due, settled := false, false
	for _, r := range recs {
		if r.Err != nil {
			continue
		}
		switch r.Event.Topic {
		case runfiles.TopicHumanAsked:
			t.asked, due = true, true
		case runfiles.TopicHumanAnswered, runfiles.TopicHumanTimedOut,
			runfiles.TopicLoopStarted, runfiles.TopicLoopResumed, runfiles.TopicLoopTerminate:
			due = true
		case runfiles.TopicEventRouted, runfiles.TopicEventRejected:
			due = due || t.asked
		case runfiles.TopicIterationSettled:
			due, settled = due || t.asked, true
		}
	}
	if settled {
		t.asked = false // decided: this read sees how
	}
	return due
}

func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func questionID(q *runfiles.Question) string {
	if q == nil {
		return ""
	}
	return q.ID
}

// questionChanged records that a task's loop waits on a new question, or
// no longer on the one it did. A report about a task no longer in its
// slot comes too late and changes nothing.
func (a *Autopilot) questionChanged(seen questionSeen) error {
	slot, ok := a.state().Active[seen.slot]
	if !ok || slot.Task != seen.task || questionID(slot.Question) == questionID(seen.q) {
		return nil
	}
	p := runfiles.AutopilotPayload{Task: seen.task, Title: slot.Title, Slot: seen.slot, Question: seen.q}
	if seen.q == nil {
		p.Question = slot.Question
		return a.journal.record(runfiles.TopicTaskAnswered, p)
	}
	return a.journal.record(runfiles.TopicTaskAsked, p)
}

// watchLogs reports writes to the event logs in the .ralph directory dir
// (and a new run's current-events) on changed, one pending signal at
// most, until closed. Other files there (the checkpoint, the stop file)
// change nothing a question depends on that the log does not.
func watchLogs(dir string) (changed <-chan struct{}, closeWatch func(), err error) {
	// A lost notification costs nothing: each wake-up reads the question
	// afresh, and filewatch says an overflow as a change, so nothing waits
	// on a write already lost.
	w, err := filewatch.New(filewatch.Options{
		Dirs:   []string{dir},
		Match:  func(path string) bool { return isLogName(filepath.Base(path)) },
		Writes: true,
	})
	if err != nil {
		return nil, nil, err
	}
	return w.C(), w.Close, nil
}

func isLogName(name string) bool {
	return name == runfiles.CurrentEventsFile || runfiles.IsEventLog(name)
}

package autopilot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/ralph-loop/ralph/engine"
)

// A task's agent may ask a person (`ralph ask`); its loop then waits in
// its worktree for the answer. Nobody watches a task's loop but the
// autopilot, so the autopilot follows each local loop's .ralph/ for the
// question it waits on and records it (task.asked) and its end
// (task.answered) in its own log: its output, progress.md, its hooks and
// `ralph events --autopilot` say which task waits, on what, and how to
// answer. `ralph autopilot status` reads the question from the loop itself.

// AnswerCommand is the command that answers the question id of task's
// loop, typed in the repository's root.
func AnswerCommand(task, id string) string {
	return fmt.Sprintf("ralph answer --task %s %s \"TEXT\"", task, id)
}

// questionSeen is what a task's loop waits on now: q, or nil for nothing.
type questionSeen struct {
	slot, task string
	q          *engine.Question
}

// followQuestions follows the loop of task, in slot, for the question it
// waits on, and tells the state machine when that changes; stop, called
// once the loop has ended, tells the last change and ends it.
// Only a loop in a worktree here can be followed: a remote task's loop
// waits on its worker, where its question is answered.
func (a *Autopilot) followQuestions(slot, task string) (stop func(), err error) {
	ws := a.worktree(task)
	dir := filepath.Join(ws, engine.DirName)
	// The loop makes its .ralph/ as it starts; it is made now so that its
	// first lines are not missed. Its .gitignore keeps it out of commits.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("follow the loop of %s: %w", task, err)
	}
	if err := engine.IgnoreOwnFilesIfMissing(dir); err != nil {
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
	go func() {
		defer close(finished)
		for {
			// Read after the watch began, so a line written in between is
			// not missed; a loop that cannot be read yet has no question.
			q, _ := engine.PendingQuestion(ws)
			if id := questionID(q); id != last {
				select {
				case a.questions <- questionSeen{slot: slot, task: task, q: q}:
					last = id
				case <-done:
				}
			}
			select {
			case <-changed:
			case <-done:
				// The loop has ended: what it last waited on is said
				// before its end is (stop is called before the end is
				// reported, and the state machine takes both in turn).
				if q, _ := engine.PendingQuestion(ws); questionID(q) != last {
					a.questions <- questionSeen{slot: slot, task: task, q: q}
				}
				return
			}
		}
	}()
	return func() { close(done); closeWatch(); <-finished }, nil
}

func questionID(q *engine.Question) string {
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
	p := Payload{Task: seen.task, Title: slot.Title, Slot: seen.slot, Question: seen.q}
	if seen.q == nil {
		p.Question = slot.Question
		return a.journal.record(TopicTaskAnswered, p)
	}
	return a.journal.record(TopicTaskAsked, p)
}

// watchLogs reports writes to the event logs in the .ralph directory dir
// (and a new run's current-events) on changed, one pending signal at
// most, until closed. Other files there (the checkpoint, the stop file)
// change nothing a question depends on that the log does not.
func watchLogs(dir string) (changed <-chan struct{}, closeWatch func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, nil, err
	}
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.Events {
			if isLogName(filepath.Base(ev.Name)) && ev.Has(fsnotify.Write|fsnotify.Create) {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	go func() {
		// A lost notification costs nothing the next write does not bring
		// back: each wake-up reads the question afresh. An overflow is
		// said as a change, so nothing waits on a write already lost.
		for range w.Errors {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, func() { _ = w.Close(); <-done }, nil
}

func isLogName(name string) bool {
	return name == engine.CurrentEventsFile || (strings.HasPrefix(name, "events-") && strings.HasSuffix(name, ".jsonl"))
}

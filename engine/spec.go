package engine

import (
	"path/filepath"

	"github.com/ralph-loop/ralph/engine/checklist"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// TaskReporter is a Reporter that also wants to hear about SPEC boxes the
// agent checks.
type TaskReporter interface {
	TaskComplete(index int, text string)
}

type taskCompleteRecord struct {
	Iteration int    `json:"iteration"`
	Index     int    `json:"index"`
	Text      string `json:"text"`
}

// specPath is the SPEC file of a SPEC-mode run, "" otherwise.
func (e *Engine) specPath() string {
	p := e.opts.Settings.SpecFile
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.opts.Workspace, p)
}

// specName is the SPEC's path as a person in the workspace would write it.
func (e *Engine) specName() string {
	p := e.specPath()
	if rel, err := filepath.Rel(e.opts.Workspace, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// specItems reads the SPEC's boxes; nil outside SPEC mode or when the file
// cannot be read (the agent may be rewriting it).
func (e *Engine) specItems() []checklist.Item {
	path := e.specPath()
	if path == "" {
		return nil
	}
	items, err := checklist.Read(path)
	if err != nil {
		e.opts.Reporter.Warn(err.Error())
	}
	return items
}

// taskEvents records, as task.complete lines, the boxes this iteration
// checked.
func (e *Engine) taskEvents() []events.Event {
	if e.specPath() == "" {
		return nil
	}
	var out []events.Event
	for _, it := range checklist.NewlyDone(e.iter.specBefore, e.specItems()) {
		if tr, ok := e.opts.Reporter.(TaskReporter); ok {
			tr.TaskComplete(it.Index, it.Text)
		}
		out = append(out, runfiles.RalphEvent(runfiles.TopicTaskComplete, taskCompleteRecord{Iteration: e.iter.info.N, Index: it.Index, Text: it.Text}))
	}
	return out
}

// taskCounts is how many of the run's tasks are done, of how many: the
// SPEC's checked boxes, or its objective, done when the run completed.
func (e *Engine) taskCounts(end runfiles.Reason) (done, total int) {
	if e.specPath() != "" {
		return checklist.Counts(e.specItems())
	}
	if end == runfiles.ReasonCompleted {
		return 1, 1
	}
	return 0, 1
}

// specDone reports whether every box of the SPEC is checked.
func (e *Engine) specDone() bool {
	done, total := checklist.Counts(e.specItems())
	return total > 0 && done == total
}

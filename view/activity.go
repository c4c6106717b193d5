package view

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// ActivityLines are an activity record as lines of the activity pane, in
// the words the plain lines use: each line of an agent's text after "| ".
func ActivityLines(a runfiles.ActivityRecord) []string {
	switch a.Kind {
	case events.ActivityText:
		var out []string
		for _, line := range strings.Split(strings.TrimRight(a.Text, "\n"), "\n") {
			if strings.TrimSpace(line) != "" {
				out = append(out, "| "+line)
			}
		}
		return out
	case events.ActivityTool:
		return []string{fmt.Sprintf("%s %s", a.Tool, toolTarget(events.Activity{ToolName: a.ToolName, Path: a.Path, Command: a.Command}))}
	case events.ActivityError:
		return []string{"agent error: " + a.Text}
	case events.ActivityRateLimit:
		return []string{"rate limited: " + a.Text}
	case events.ActivityWarning:
		return []string{"warning: " + a.Text}
	case events.ActivityUsage:
	}
	return nil
}

// ActivityLog is a Reporter that appends each activity of a run's agents
// to the run's activity.jsonl. It reports nothing else. A failed write is
// dropped after a warning, once: the activity is for watching, and the run
// must not end for it.
type ActivityLog struct {
	dir  runfiles.Dir
	now  func() time.Time
	warn func(string)

	mu     sync.Mutex
	f      *runfiles.ActivityWriter
	failed bool
}

// NewActivityLog records the activity of the runs in workspace; warn is
// told of the first write that fails.
func NewActivityLog(workspace string, now func() time.Time, warn func(string)) *ActivityLog {
	return NewActivityLogIn(runfiles.In(workspace), now, warn)
}

// NewActivityLogIn records the activity of the runs whose files are in
// dir (a chain step's directory).
func NewActivityLogIn(dir runfiles.Dir, now func() time.Time, warn func(string)) *ActivityLog {
	return &ActivityLog{dir: dir, now: now, warn: warn}
}

func (l *ActivityLog) LoopStarted(run engine.RunInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closeFile()
	var err error
	l.f, err = runfiles.OpenActivityIn(l.dir, run.RunID)
	l.fail(err)
}

func (l *ActivityLog) Activity(it engine.IterationInfo, a events.Activity) {
	rec := runfiles.ActivityRecord{TS: l.now(), Iteration: it.N, Hat: it.Hat.ID, Kind: a.Kind, Text: a.Text,
		Tool: a.Tool, ToolName: a.ToolName, Path: a.Path, Command: a.Command, CostUSD: a.CostUSD, ResetAt: a.ResetAt}
	if a.Kind == events.ActivityUsage {
		rec.Tokens = &a.Usage
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	l.fail(l.f.Append(rec))
}

func (l *ActivityLog) LoopFinished(engine.Summary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closeFile()
}

func (l *ActivityLog) closeFile() {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// fail warns of the first error and stops writing.
func (l *ActivityLog) fail(err error) {
	if err == nil {
		return
	}
	l.closeFile()
	if !l.failed && l.warn != nil {
		l.warn(fmt.Sprintf("the agents' activity is not recorded for ralph watch: %v", err))
	}
	l.failed = true
}

func (*ActivityLog) IterationStarted(engine.IterationInfo)                                {}
func (*ActivityLog) EventAccepted(events.Event, []string, runfiles.Disposition)           {}
func (*ActivityLog) EventRejected(events.Event, string)                                   {}
func (*ActivityLog) IterationFinished(engine.IterationInfo, events.AgentResult)           {}
func (*ActivityLog) Commit(engine.IterationInfo, engine.Commit)                           {}
func (*ActivityLog) RateLimited(engine.IterationInfo, time.Duration)                      {}
func (*ActivityLog) Paced(runfiles.PacedRecord)                                           {}
func (*ActivityLog) TaskComplete(int, string)                                             {}
func (*ActivityLog) Stuck(runfiles.Termination, int)                                      {}
func (*ActivityLog) Warn(string)                                                          {}
func (*ActivityLog) Notice(string)                                                        {}
func (*ActivityLog) WaitingForHuman(runfiles.Question)                                    {}
func (*ActivityLog) HumanAnswered(runfiles.Question, engine.Reply)                        {}
func (*ActivityLog) BackendSwitched(engine.IterationInfo, runfiles.BackendSwitchedRecord) {}
func (*ActivityLog) WaveProgress(engine.IterationInfo, runfiles.WaveProgress)             {}

var _ Reporter = (*ActivityLog)(nil)

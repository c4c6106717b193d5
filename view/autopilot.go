package view

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/runfiles"
)

// AutopilotLines shows an autopilot's events as they are recorded: one
// line each for people, or, headless, each event's own JSON line (the line
// the autopilot's log holds) for programs. quiet keeps only task outcomes,
// merges and the end.
type AutopilotLines struct {
	mu       sync.Mutex
	out      io.Writer
	headless bool
	quiet    bool
}

// NewAutopilotLines writes to out.
func NewAutopilotLines(out io.Writer, headless, quiet bool) *AutopilotLines {
	return &AutopilotLines{out: out, headless: headless, quiet: quiet}
}

// Event shows one recorded event.
func (v *AutopilotLines) Event(ev events.Event, _ *runfiles.AutopilotState) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.headless {
		if line, err := events.EncodeLine(ev); err == nil {
			_, _ = v.out.Write(line)
		}
		return
	}
	if v.quiet && !quietTopics[ev.Topic] {
		return
	}
	if text := AutopilotEventText(ev); text != "" {
		fmt.Fprintf(v.out, "%s %s\n", ev.TS.Local().Format("15:04:05"), text)
	}
}

var quietTopics = map[string]bool{
	runfiles.TopicTaskCompleted: true, runfiles.TopicTaskClosed: true, runfiles.TopicTaskFailed: true,
	runfiles.TopicTaskAssignFailed: true, runfiles.TopicMergeDone: true, runfiles.TopicMergePushed: true, runfiles.TopicAllDone: true,
	runfiles.TopicAutopilotStopped: true, runfiles.TopicAutopilotNotice: true,
	// A task that waits for a person waits until someone reads this.
	runfiles.TopicTaskAsked: true,
	// A pull request waits for a person too.
	runfiles.TopicTaskPROpened: true,
}

// AutopilotEventText is one autopilot event in words; "" for bookkeeping
// events people need not see.
func AutopilotEventText(ev events.Event) string {
	p := runfiles.DecodeAutopilotPayload(ev)
	task := p.Task
	if p.Title != "" {
		task += " (" + p.Title + ")"
	}
	switch ev.Topic {
	case runfiles.TopicAutopilotStarted:
		limit := "no task limit"
		if p.MaxTasks > 0 {
			limit = "at most " + plural.Count(p.MaxTasks, "task", "tasks")
		}
		s := fmt.Sprintf("autopilot %s: tasks from %s, %s at once, %s", p.RunID, p.Source, plural.Count(p.Parallel, "slot", "slots"), limit)
		if p.Message != "" {
			s += "; " + p.Message
		}
		return s
	case runfiles.TopicAutopilotPaused:
		return "paused: no new tasks start; running ones go on"
	case runfiles.TopicAutopilotResumed:
		return "resumed"
	case runfiles.TopicAutopilotStopping:
		return "stopping: " + p.Message
	case runfiles.TopicAutopilotNotice:
		return "note: " + p.Message
	case runfiles.TopicTaskAssigned:
		where := p.Worktree
		if p.RunsOn != "" {
			// The worktree here only prepares the branch the worker takes.
			where = fmt.Sprintf("%s, on branch %s", p.RunsOn, p.Branch)
		}
		s := fmt.Sprintf("slot %s: %s → %s", p.Slot, task, where)
		if p.Attempt > 1 {
			s += fmt.Sprintf(" (attempt %d)", p.Attempt)
		}
		return s + "; watch it with `" + runfiles.WatchCommand(p.Task) + "`"
	case runfiles.TopicTaskRunning:
		return ""
	case runfiles.TopicTaskHeld:
		return fmt.Sprintf("held: %s shares component %s with %s; it starts when that one is done", task, strings.Join(p.Components, ", "), p.HeldBy)
	case runfiles.TopicTaskAsked:
		if q := p.Question; q != nil {
			return fmt.Sprintf("%s waits for a person: %s; answer with: %s", task, questionText(*q), runfiles.AnswerCommand(p.Task, q.ID))
		}
		return task + " waits for a person"
	case runfiles.TopicTaskAnswered:
		if q := p.Question; q != nil {
			return fmt.Sprintf("%s: question %s no longer waits (answered, or its time ran out); its loop goes on", p.Task, q.ID)
		}
		return p.Task + ": its loop no longer waits for a person"
	case runfiles.TopicTaskFinished:
		if p.Cost != nil {
			return fmt.Sprintf("%s: its loop completed, cost %s; queued for merge", p.Task, CostText(*p.Cost))
		}
		return fmt.Sprintf("%s: its loop completed; queued for merge", p.Task)
	case runfiles.TopicTaskRetry:
		return fmt.Sprintf("%s: running its loop again on the new base (attempt %d)", p.Task, p.Attempt)
	case runfiles.TopicTaskCompleted:
		how := "merged as " + short(p.Commit)
		if p.URL != "" {
			how = fmt.Sprintf("%s (%s) at %s", runfiles.ChangeName(p.Forge, p.Number), p.URL, short(p.Commit))
		}
		if p.Unclosed {
			return fmt.Sprintf("completed: %s, %s; still open in the tracker, closed by the next run", task, how)
		}
		return fmt.Sprintf("completed: %s, %s", task, how)
	case runfiles.TopicTaskPROpened:
		return fmt.Sprintf("%s: %s waits for review: %s (head %s)", task, runfiles.ChangeName(p.Forge, p.Number), p.URL, short(p.Commit))
	case runfiles.TopicTaskPRConflicted:
		return fmt.Sprintf("%s: %s no longer merges onto its base; merging it again on the base's new tip", task, runfiles.ChangeName(p.Forge, p.Number))
	case runfiles.TopicTaskClosed:
		return fmt.Sprintf("closed: %s, merged earlier as %s", task, short(p.Commit))
	case runfiles.TopicTaskFailed:
		return fmt.Sprintf("failed: %s: %s", task, p.Reason)
	case runfiles.TopicTaskAssignFailed:
		return fmt.Sprintf("not started: %s: %s", task, p.Reason)
	case runfiles.TopicMergeStarted:
		return fmt.Sprintf("merging %s", task)
	case runfiles.TopicMergeDone:
		if p.Checks > 0 {
			return fmt.Sprintf("merged %s as %s; %s passed on the merged result", p.Task, short(p.Commit), plural.Count(p.Checks, "verify check", "verify checks"))
		}
		return fmt.Sprintf("merged %s as %s", p.Task, short(p.Commit))
	case runfiles.TopicMergePushed:
		if p.Branch == "ralph/"+p.Task {
			return fmt.Sprintf("pushed %s's merge %s to %s as %s", p.Task, short(p.Commit), p.Remote, p.Branch)
		}
		return fmt.Sprintf("pushed %s's merge %s to %s/%s", p.Task, short(p.Commit), p.Remote, p.Branch)
	case runfiles.TopicMergeFailed:
		return fmt.Sprintf("merge of %s failed: %s", p.Task, p.Reason)
	case runfiles.TopicVerifyFailed:
		return fmt.Sprintf("verification of %s failed: %s", p.Task, p.Reason)
	case runfiles.TopicAllDone:
		return fmt.Sprintf("all done: %s completed, %s failed", plural.Count(p.Completed, "task", "tasks"), plural.Count(p.Failed, "task", "tasks"))
	case runfiles.TopicAutopilotStopped:
		code := 0
		if p.ExitCode != nil {
			code = *p.ExitCode
		}
		s := fmt.Sprintf("autopilot ended (%s, exit %d): %d completed, %d failed", p.Reason, code, p.Completed, p.Failed)
		if p.Message != "" {
			s += ": " + p.Message
		}
		return s
	}
	return ev.Topic + " " + ev.PayloadText()
}

// WriteAutopilotPlan renders a dry run's plan.
func WriteAutopilotPlan(w io.Writer, p autopilot.Plan) {
	fmt.Fprintf(w, "dry run: nothing is changed. %s ready in %s; %s at once.\n",
		plural.Count(len(p.Tasks), "task", "tasks"), p.Source, plural.Count(p.Parallel, "slot", "slots"))
	for _, t := range p.Tasks {
		title := t.Task.Title
		// The agent the task names, where its loop would run with one
		// other than the config's.
		agent := ""
		if a := (autopilot.Agent{Backend: t.Task.Backend, Model: t.Task.Model}); !a.IsZero() {
			agent = "; " + a.String()
		}
		switch {
		case t.Invalid != "":
			fmt.Fprintf(w, "%3d. %s (%s): would fail: %s\n", t.Position, t.Task.ID, title, t.Invalid)
		case t.Beyond:
			fmt.Fprintf(w, "%3d. %s (%s): not started in this run (max_tasks %d)%s\n", t.Position, t.Task.ID, title, p.MaxTasks, agent)
		case t.Slot != "":
			fmt.Fprintf(w, "%3d. %s (%s) [P%d]: starts in slot %s%s\n", t.Position, t.Task.ID, title, t.Task.Priority, t.Slot, agent)
		case t.HeldBy != "":
			fmt.Fprintf(w, "%3d. %s (%s) [P%d]: held until %s is done (shared component)%s\n", t.Position, t.Task.ID, title, t.Task.Priority, t.HeldBy, agent)
		default:
			fmt.Fprintf(w, "%3d. %s (%s) [P%d]: starts when a slot is free%s\n", t.Position, t.Task.ID, title, t.Task.Priority, agent)
		}
	}
	if len(p.Blocked) > 0 {
		fmt.Fprintf(w, "blocked by dependencies (%d):\n", len(p.Blocked))
		for _, t := range p.Blocked {
			fmt.Fprintf(w, "     %s (%s): waits for %s\n", t.ID, t.Title, strings.Join(t.Deps, ", "))
		}
	}
	var now []string
	for _, t := range p.Tasks {
		if t.Slot != "" {
			now = append(now, t.Task.ID)
		}
	}
	if len(now) > 0 {
		fmt.Fprintf(w, "claimed in %s at once: %s; the others as slots free\n", p.Source, strings.Join(now, ", "))
	}
	if d := p.Delivery; d.Mode != "" {
		fmt.Fprintln(w, "delivery: "+deliveryText(d))
	}
}

// deliveryText says how verified work would leave the machine.
func deliveryText(d autopilot.Delivery) string {
	switch d.Mode {
	case "push":
		return fmt.Sprintf("push: each verified merge is made on %s/%s and pushed there with a lease, then %s moves to it", d.Remote, d.Base, d.Base)
	case "pr":
		s := fmt.Sprintf("pr: each verified merge is pushed to %s as ralph/<task> and a pull request opened on %s %s onto %s; ", d.Remote, d.Forge, d.Repo, d.Base)
		if d.CloseOn == "opened" {
			s += "the task closes once it is open"
		} else {
			s += "the task closes once it is merged (ralph follows it)"
		}
		if len(d.Labels) > 0 {
			s += "; labels: " + strings.Join(d.Labels, ", ")
		}
		return s + "; " + d.Base + " here does not move"
	}
	return fmt.Sprintf("merge: each verified merge lands on %s here; nothing is pushed", d.Base)
}

// WriteAutopilotStatus renders `ralph autopilot status`.
func WriteAutopilotStatus(w io.Writer, s runfiles.AutopilotStatus) {
	switch {
	case s.Running && s.Paused:
		fmt.Fprintf(w, "autopilot %s is running (pid %d), paused\n", s.RunID, s.PID)
	case s.Running:
		fmt.Fprintf(w, "autopilot %s is running (pid %d)\n", s.RunID, s.PID)
	case s.Ended != nil:
		fmt.Fprintf(w, "autopilot %s ended (%s, exit %d)\n", s.RunID, s.Ended.Reason, s.Ended.ExitCode)
	default:
		fmt.Fprintf(w, "autopilot %s is not running; `ralph autopilot` goes on with it\n", s.RunID)
	}
	pending := "unknown"
	if s.Pending >= 0 {
		pending = fmt.Sprint(s.Pending)
	}
	fmt.Fprintf(w, "tasks: %d started, %d completed, %d failed, %s pending (source %s, parallel %d)\n",
		s.Started, s.Completed, s.Failed, pending, s.Source, s.Parallel)
	for _, a := range s.Active {
		loop := "loop not running"
		switch {
		case a.LoopRunning && a.Waiting != nil:
			loop = fmt.Sprintf("iteration %d done, waiting for a person", a.Iteration)
		case a.LoopRunning:
			loop = fmt.Sprintf("hat %s, iteration %d", orDash(a.Hat), a.Iteration)
		}
		where := "in " + a.Worktree
		if a.Worker != "" {
			where = "on " + a.Worker // its worktree is on the worker's machine
		}
		fmt.Fprintf(w, "slot %s: %s (%s), %s, %s, %s\n", a.Slot, a.Task, a.Title, a.Elapsed, loop, where)
		if q := a.Waiting; q != nil {
			fmt.Fprintf(w, "  asks %s\n  answer with: %s\n", questionText(*q), a.AnswerWith)
		}
	}
	if s.Merging != nil {
		fmt.Fprintf(w, "merging: %s (%s)\n", s.Merging.Task, s.Merging.Step)
	}
	for _, r := range s.Reviews {
		fmt.Fprintf(w, "in review: %s\n", ReviewText(r))
	}
	for _, m := range s.MergeQueue {
		if s.Merging == nil || m.Task != s.Merging.Task {
			fmt.Fprintf(w, "waiting to merge: %s\n", m.Task)
		}
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "%s: %s (%s): %s\n", runfiles.FailureWord(f), f.Task, f.Title, f.Reason)
	}
}

// ReviewText is a task in review for a line: the task, its pull request
// and where people review it.
func ReviewText(r runfiles.TaskReview) string {
	task := r.Task
	if r.Title != "" {
		task += " (" + r.Title + ")"
	}
	return fmt.Sprintf("%s: %s, %s", task, r.PR.Name(), r.PR.URL)
}

// questionText is an agent's question for a line of the autopilot's:
// its id, the hat that asked, the text and its choices, on one line.
func questionText(q runfiles.Question) string {
	s := fmt.Sprintf("question %s from hat %s: %s", q.ID, q.Hat, Sanitize(q.Text))
	if len(q.Options) > 0 {
		s += " [" + Sanitize(strings.Join(q.Options, " | ")) + "]"
	}
	return s
}

// short is a merge commit as the autopilot's lines name it: 12 hex
// digits, which stay unique in a repository that merges many tasks.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

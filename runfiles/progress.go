package runfiles

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/ralphdir"
)

// latestOutcomes is how many finished tasks progress.md lists.
const latestOutcomes = 10

// WriteProgress rewrites .ralph/progress.md from the state, atomically;
// unflushed, as it is for people and written again after each event.
func WriteProgress(dir string, st *AutopilotState, now time.Time) error {
	path := Dir(dir).Progress()
	if err := ralphdir.WriteFileAtomicUnsynced(dir, path, []byte(RenderProgress(st, now))); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RenderProgress is progress.md: the counters, the active slots, the
// merge queue and the latest outcomes.
func RenderProgress(st *AutopilotState, now time.Time) string {
	var b strings.Builder
	status := "running"
	switch {
	case st.Ended != nil:
		status = "ended: " + st.Ended.Reason
	case st.Paused:
		status = "paused"
	}
	waiting := waitingSlots(st)
	if len(waiting) > 0 && st.Ended == nil {
		status += fmt.Sprintf("; %d waiting for a person", len(waiting))
	}
	fmt.Fprintf(&b, "# Autopilot %s\n\n", st.RunID)
	fmt.Fprintf(&b, "- Status: %s (updated %s)\n", status, now.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "- Source: %s · parallel %d · max tasks %s\n", st.Source, st.Parallel, limitText(st.MaxTasks))
	fmt.Fprintf(&b, "- Started: %d · completed: %d · failed: %d · active: %d · waiting to merge: %d",
		st.StartedCount, len(st.Completed), len(st.Failed), len(st.Active), len(st.MergeQueue))
	if len(st.Reviews) > 0 {
		fmt.Fprintf(&b, " · in review: %d", len(st.Reviews))
	}
	b.WriteString("\n\n")
	if len(st.Active) > 0 {
		b.WriteString("## Active\n\n| slot | task | title | attempt | running for |\n|---|---|---|---|---|\n")
		for _, k := range slices.Sorted(maps.Keys(st.Active)) {
			s := st.Active[k]
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", k, s.Task, cell(s.Title), s.Attempt, now.Sub(s.StartedAt).Round(time.Second))
		}
		b.WriteString("\n")
	}
	if len(waiting) > 0 {
		b.WriteString("## Waiting for a person\n\n")
		for _, k := range waiting {
			writeQuestion(&b, st.Active[k])
		}
		b.WriteString("\n")
	}
	if len(st.Reviews) > 0 {
		b.WriteString("## In review\n\n")
		for _, r := range st.Reviews {
			fmt.Fprintf(&b, "- %s (%s): %s, %s\n", r.Task, oneLine(r.Title), r.PR.Name(), r.PR.URL)
		}
		b.WriteString("\n")
	}
	if len(st.MergeQueue) > 0 {
		b.WriteString("## Merge queue\n\n")
		for _, m := range st.MergeQueue {
			fmt.Fprintf(&b, "- %s (%s): %s\n", m.Task, m.Title, m.Step)
		}
		b.WriteString("\n")
	}
	if outcomes := latest(st); len(outcomes) > 0 {
		b.WriteString("## Latest outcomes\n\n")
		for _, o := range outcomes {
			b.WriteString("- " + o + "\n")
		}
	}
	return b.String()
}

// waitingSlots are the active slots whose loop waits on a person, in
// slot order.
func waitingSlots(st *AutopilotState) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(st.Active)) {
		if st.Active[k].Question != nil {
			out = append(out, k)
		}
	}
	return out
}

// writeQuestion is one task's question: what it asks, with its choices,
// and the command that answers it.
func writeQuestion(b *strings.Builder, s TaskSlot) {
	q := s.Question
	fmt.Fprintf(b, "- %s (%s) asks (%s, hat %s, %s): %s\n", s.Task, oneLine(s.Title), q.ID, q.Hat,
		q.AskedAt.UTC().Format(time.RFC3339), oneLine(q.Text))
	if len(q.Options) > 0 {
		fmt.Fprintf(b, "  - options: %s\n", oneLine(strings.Join(q.Options, " | ")))
	}
	if !q.Deadline.IsZero() {
		fmt.Fprintf(b, "  - waits until %s\n", q.Deadline.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(b, "  - answer with `%s`\n", AnswerCommand(s.Task, q.ID))
}

// oneLine keeps an agent's text on its list item: its line breaks would
// end the item, or start markdown of their own.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func limitText(n int) string {
	if n <= 0 {
		return "no limit"
	}
	return fmt.Sprint(n)
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// latest lists the most recent outcomes, newest first.
func latest(st *AutopilotState) []string {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, o := range st.Completed {
		lines = append(lines, line{o.At, fmt.Sprintf("%s completed: %s (%s)", o.At.UTC().Format(time.TimeOnly), o.Task, o.Title)})
	}
	for _, o := range st.Failed {
		lines = append(lines, line{o.At, fmt.Sprintf("%s %s: %s (%s): %s", o.At.UTC().Format(time.TimeOnly), FailureWord(o), o.Task, o.Title, o.Reason)})
	}
	slices.SortStableFunc(lines, func(x, y line) int { return y.at.Compare(x.at) })
	var out []string
	for i, l := range lines {
		if i == latestOutcomes {
			break
		}
		out = append(out, l.text)
	}
	return out
}

// AnswerCommand is the command that answers the question id of task's
// loop, typed in the repository's root.
func AnswerCommand(task, id string) string {
	return fmt.Sprintf("ralph answer --task %s %s \"TEXT\"", task, id)
}

// WatchCommand is the command that attaches to the loop of task: a view
// of the autopilot with that task's slot selected.
func WatchCommand(task string) string { return "ralph watch --task " + task }

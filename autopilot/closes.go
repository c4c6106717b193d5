package autopilot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/ralph-loop/ralph/runfiles"

	"github.com/ralph-loop/ralph/events"
)

// A task is done once ralph's merge of it is on the base branch; closing
// it in the tracker follows, and may fail (the tracker down, its tool
// busy). Such a task is never run or merged again: every later run finds
// its merge on the base branch and retries only the close.

// landings is what the autopilot's log says of the merges it landed,
// across all its runs: which merge commits were followed by the close of
// their task, and which tasks' close failed after their merge.
type landings struct {
	// closed holds merge commits whose task was closed after them.
	closed map[string]bool
	// unclosed maps a task whose close failed to its merge commit, until
	// a later close succeeds; urls maps such a task delivered as a pull
	// request to the pull request.
	unclosed map[string]string
	urls     map[string]string
}

// readLandings folds every task.completed and task.closed line of the log
// at path; a log that does not exist has none.
func readLandings(path string) (landings, error) {
	l := landings{closed: map[string]bool{}, unclosed: map[string]string{}, urls: map[string]string{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	defer f.Close()
	completed, closed := []byte(`"`+runfiles.TopicTaskCompleted+`"`), []byte(`"`+runfiles.TopicTaskClosed+`"`)
	err = events.Scan(f, func(r events.Record) error {
		if !bytes.Contains(r.Line, completed) && !bytes.Contains(r.Line, closed) {
			return nil // most lines are neither, and need no decoding
		}
		if ev, err := events.ParseLine(r.Line); err == nil {
			l.apply(ev.Topic, runfiles.DecodeAutopilotPayload(ev))
		}
		return nil
	})
	if err != nil {
		return l, fmt.Errorf("read %s: %w", path, err)
	}
	return l, nil
}

func (l landings) apply(topic string, p runfiles.AutopilotPayload) {
	switch {
	case topic == runfiles.TopicTaskCompleted && p.Unclosed:
		l.unclosed[p.Task], l.urls[p.Task] = p.Commit, p.URL
	case topic == runfiles.TopicTaskCompleted || topic == runfiles.TopicTaskClosed:
		l.closed[p.Commit] = true
		delete(l.unclosed, p.Task)
		delete(l.urls, p.Task)
	}
}

// alreadyMerged is the commit by which ralph merged task into the base
// branch when the task is still to be closed, not done: its merge is on
// the base branch and no close followed it; or, for a task delivered as a
// pull request, whose merge the local base branch never has, the log says
// its close failed. A task closed after its merge and open again was
// reopened by someone, and runs again.
func (a *Autopilot) alreadyMerged(task string) string {
	if c := a.merges[task]; c != "" && !a.landed.closed[c] {
		return c
	}
	if a.landed.urls[task] != "" {
		return a.landed.unclosed[task]
	}
	return ""
}

// retryCloses closes, once a run, each task whose close failed after its
// merge in an earlier run, when the merge is still on the base branch.
func (a *Autopilot) retryCloses(ctx context.Context) error {
	for _, task := range slices.Sorted(maps.Keys(a.landed.unclosed)) {
		commit := a.landed.unclosed[task]
		if a.merges[task] != commit && a.landed.urls[task] == "" {
			continue // the base branch no longer has that merge
		}
		if err := a.closeMerged(ctx, task, "", commit); err != nil {
			return err
		}
	}
	return nil
}

// closeMerged retries the close of task, merged into the base branch by
// commit, at most once a run; the task is not run again either way.
func (a *Autopilot) closeMerged(ctx context.Context, task, title, commit string) error {
	if a.closeTried[task] {
		return nil
	}
	a.closeTried[task] = true
	done := fmt.Sprintf("merged into %s by %s", a.base, shortHash(commit))
	if url := a.landed.urls[task]; url != "" {
		done = "delivered as " + url
	}
	if err := a.notice(fmt.Sprintf("%s is %s but was not closed in %s; closing it (it is not run again)",
		task, done, a.opts.Source.Name())); err != nil {
		return err
	}
	reason := a.mergedReason(commit)
	if url := a.landed.urls[task]; url != "" {
		reason = fmt.Sprintf("delivered by ralph autopilot as %s (%s)", url, shortHash(commit))
	}
	closed, err := a.closeTask(ctx, task, reason)
	if err != nil || !closed {
		return err
	}
	p := runfiles.AutopilotPayload{Task: task, Title: title, Commit: commit}
	if err := a.journal.record(runfiles.TopicTaskClosed, p); err != nil {
		return err
	}
	a.landed.apply(runfiles.TopicTaskClosed, p)
	return nil
}

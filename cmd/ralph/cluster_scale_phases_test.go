package main

import (
	"os"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/runfiles"
)

// clusterPhases is where the coordinator's time went in a cluster run, per
// task, read from the timestamps of its own log: what it spends on a task
// alone (its start, its merge and close), which its single goroutine does
// one task at a time, against what it waits for (the worker's loop, the
// merge queue).
type clusterPhases struct {
	// start is task.assigned → task.running: the claim, the worktree, the
	// start commit, the dispatch record.
	start time.Duration
	// loop is task.running → task.finished: the push, the worker's loop,
	// the result's fetch and landing in the worktree.
	loop time.Duration
	// queued is task.finished → merge.started: waiting for the merge queue.
	queued time.Duration
	// merge is merge.started → task.completed: the merge, the move of the
	// base branch, the tracker's close and its commit.
	merge time.Duration
	tasks int
}

// readClusterPhases folds the autopilot's log in repo into mean times per
// task.
func readClusterPhases(tb testing.TB, repo string) clusterPhases {
	tb.Helper()
	f, err := os.Open(runfiles.In(repo).AutopilotEvents())
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	at := map[string]map[string]time.Time{}
	err = events.Scan(f, func(r events.Record) error {
		ev, err := events.ParseLine(r.Line)
		if err != nil {
			return nil //nolint:nilerr // not an event: nothing to time
		}
		task := runfiles.DecodeAutopilotPayload(ev).Task
		if task == "" {
			return nil
		}
		if at[task] == nil {
			at[task] = map[string]time.Time{}
		}
		if _, ok := at[task][ev.Topic]; !ok {
			at[task][ev.Topic] = ev.TS
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	var p clusterPhases
	for _, ts := range at {
		if ts[runfiles.TopicTaskCompleted].IsZero() {
			continue
		}
		p.tasks++
		p.start += ts[runfiles.TopicTaskRunning].Sub(ts[runfiles.TopicTaskAssigned])
		p.loop += ts[runfiles.TopicTaskFinished].Sub(ts[runfiles.TopicTaskRunning])
		p.queued += ts[runfiles.TopicMergeStarted].Sub(ts[runfiles.TopicTaskFinished])
		p.merge += ts[runfiles.TopicTaskCompleted].Sub(ts[runfiles.TopicMergeStarted])
	}
	if p.tasks > 0 {
		n := time.Duration(p.tasks)
		p.start, p.loop, p.queued, p.merge = p.start/n, p.loop/n, p.queued/n, p.merge/n
	}
	return p
}

package autopilot

import (
	"strconv"

	"github.com/ralph-loop/ralph/runfiles"
)

// What the state machine asks of the state before it starts a task: the
// state is the fold of the log (runfiles.AutopilotState); where the next
// task may go is the autopilot's policy.

// freeSlot is the lowest-numbered slot with no task, "" when all
// parallel slots are taken.
func freeSlot(s *runfiles.AutopilotState) string {
	for i := 1; i <= s.Parallel; i++ {
		k := strconv.Itoa(i)
		if _, taken := s.Active[k]; !taken {
			return k
		}
	}
	return ""
}

// busyComponents maps each component to the task holding it: a task
// running or waiting for its merge holds its components until it is done.
func busyComponents(s *runfiles.AutopilotState) map[string]string {
	busy := map[string]string{}
	for _, slot := range s.Active {
		for _, c := range slot.Components {
			busy[c] = slot.Task
		}
	}
	for _, m := range s.MergeQueue {
		for _, c := range m.Components {
			busy[c] = m.Task
		}
	}
	for _, r := range s.Retry {
		for _, c := range r.Components {
			busy[c] = r.Task
		}
	}
	return busy
}

// canStart reports whether another task may start under max_tasks.
func canStart(s *runfiles.AutopilotState) bool { return s.MaxTasks <= 0 || s.StartedCount < s.MaxTasks }

// backlogged reports whether more finished tasks wait to merge than
// there are slots. A task started now would only wait behind them for its
// merge, while its start took the autopilot's goroutine, and the
// machine, from the merge queue, which is then what bounds the run: its
// slot waits until a merge has landed instead. Up to a slots' worth may
// wait, so that each slot's next loop runs beside the merge of its last
// (a verification may take minutes).
func backlogged(s *runfiles.AutopilotState) bool {
	return len(s.MergeQueue) > s.Parallel
}

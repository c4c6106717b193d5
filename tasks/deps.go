package tasks

import (
	"fmt"
	"strings"
)

// UnknownDepError is a task that waits for an id its tracker does not
// have. Taken as done, the dependency would let the task start before work
// that may still be to come under another id; taken as open, it would hold
// the task back for ever without a word: the sources refuse it instead.
type UnknownDepError struct {
	// Task is the id of the task that waits, Dep the id it waits for.
	Task, Dep string
	// Kind is what the tracker calls one task ("story").
	Kind string
	// In is where the tasks are (a file of the repository).
	In string
	// Place says where the task is in it ("userStories[2] on line 9").
	Place string
	// Fix says how to make the dependency one the tracker has.
	Fix string
}

func (e *UnknownDepError) Error() string {
	return fmt.Sprintf("%s %q in %s (%s) depends on %q, which is not the id of any %s in %s", e.Kind, e.Task, e.In, e.Place, e.Dep, e.Kind, e.In)
}

// Hint says how to fix the tracker.
func (e *UnknownDepError) Hint() string { return e.Fix }

// DepCycleError is tasks that wait for each other, so that none of them
// can ever start.
type DepCycleError struct {
	// Cycle is the ids in the order each waits for the next, the first
	// again at the end ("US-1", "US-3", "US-1"); one task that waits for
	// itself is its id twice.
	Cycle []string
	// Kind is what the tracker calls its tasks, plural ("stories").
	Kind string
	// In is where the tasks are.
	In string
	// Places say where each task of the cycle is, in the cycle's order
	// and without the repeat.
	Places []string
	// Fix says how to break the cycle.
	Fix string
}

func (e *DepCycleError) Error() string {
	return fmt.Sprintf("%s in %s depend on each other in a cycle, so none of them can start: %s (%s)",
		e.Kind, e.In, strings.Join(e.Cycle, " → "), strings.Join(e.Places, ", "))
}

// Hint says how to fix the tracker.
func (e *DepCycleError) Hint() string { return e.Fix }

// depCycle finds the first cycle in the graph whose nodes are ids, in
// order, and whose edges are deps (each id's, in order; every dep is one
// of ids): the ids on it, each followed by the one it waits for, the
// first again at the end. Nil when there is none. The search goes in the
// tracker's order, so the same file names the same cycle every time.
func depCycle(ids []string, deps map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = onPath
		path = append(path, id)
		for _, d := range deps[id] {
			switch state[d] {
			case onPath:
				start := len(path) - 1
				for path[start] != d {
					start--
				}
				return append(append([]string(nil), path[start:]...), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for _, id := range ids {
		if state[id] == unseen {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// cycleFix says how to break cycle, which depCycle found in a tracker
// whose field for the ids a task waits for is field.
func cycleFix(cycle []string, field string) string {
	if len(cycle) == 2 {
		return fmt.Sprintf("a task cannot wait for itself: remove %q from its own %s", cycle[0], field)
	}
	last, first := cycle[len(cycle)-2], cycle[len(cycle)-1]
	return fmt.Sprintf("each waits for the next to be done, so none can start: remove one of these dependencies, "+
		"e.g. %q from the %s of %s, and keep the order the work must be done in", first, field, last)
}

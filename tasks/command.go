package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// commandSource is any other tracker, through shell commands the config
// gives (run with sh -c in the repository root):
//
//   - list prints the tasks as JSON: one array of objects, or one object a
//     line. An object has id, title, description, priority (lower first;
//     0 when absent), tags or labels, acceptance_criteria (a string of
//     lines or an array), status, and optionally deps (ids it waits for)
//     and the agent its loop runs with, backend and model (see agent.go).
//     A dep is open while the list shows it with a status other than
//     closed (or done); one the list does not show is taken as done.
//     Open tasks that wait for each other in a cycle fail the list.
//     Ready is the listed tasks that are not closed and whose deps are
//     not open, by priority, ties in list order; Blocked is those with an
//     open dep; Show finds the id in the list.
//   - show, optional, prints the task RALPH_TASK_ID names as list would
//     print it (one object, or a list holding it), and nothing (status
//     0) when there is none. Given, Show runs it rather than list: one
//     task, not the whole backlog, for each task started, claimed,
//     closed or failed. A dep is open while show shows it with a status
//     other than closed (or done), as with list.
//   - claim, close and fail get RALPH_TASK_ID and RALPH_TASK_REASON in
//     their environment, once the list (or show) has shown the task
//     exists. close is required; an empty claim or fail does nothing.
//   - files, when given, are what the commands change in the repository;
//     without them Files is empty and the autopilot finds out.
type commandSource struct {
	dir  string
	spec Spec
}

func (s *commandSource) Name() string { return "command" }
func (s *commandSource) Tool() string { return "" }
func (s *commandSource) Files() []string {
	var files []string
	for _, f := range s.spec.Files {
		files = append(files, filepath.ToSlash(filepath.Clean(f)))
	}
	return files
}

// commandTask is what a list command prints for one task.
type commandTask struct {
	ID                 json.RawMessage `json:"id"`
	Title              string          `json:"title"`
	Description        string          `json:"description"`
	Priority           *float64        `json:"priority"`
	Tags               []string        `json:"tags"`
	Labels             []string        `json:"labels"`
	AcceptanceCriteria json.RawMessage `json:"acceptance_criteria"`
	Status             string          `json:"status"`
	Deps               []string        `json:"deps"`
	Backend            json.RawMessage `json:"backend"`
	Model              json.RawMessage `json:"model"`
}

func (s *commandSource) list(ctx context.Context) ([]Task, error) {
	out, err := runShell(ctx, s.dir, s.spec.List)
	if err != nil {
		return nil, fmt.Errorf("autopilot.source list: %w", err)
	}
	tasks, err := parseCommandList(out)
	if err != nil {
		return nil, fmt.Errorf("autopilot.source list (%s): %w", s.spec.List, err)
	}
	// Deps are the listed deps that are not closed.
	closed := map[string]bool{}
	listed := map[string]bool{}
	for _, t := range tasks {
		listed[t.ID] = true
		closed[t.ID] = t.Closed
	}
	for i, t := range tasks {
		var open []string
		for _, d := range t.Deps {
			if listed[d] && !closed[d] {
				open = append(open, d)
			}
		}
		tasks[i].Deps = open
	}
	return tasks, nil
}

// parseCommandList reads a list command's output: a JSON array of task
// objects, or one object a line.
func parseCommandList(out []byte) ([]Task, error) {
	trimmed := bytes.TrimSpace(out)
	var raws []json.RawMessage
	var lines []int // the line each raw object starts on
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, fmt.Errorf("its output is not a JSON array of tasks: %s", jsonProblem(trimmed, err))
		}
	} else {
		for i, line := range strings.Split(string(out), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if !json.Valid([]byte(line)) || line[0] != '{' {
				return nil, fmt.Errorf("line %d of its output, %.80q, is not a JSON object (print one object a line, or one array)", i+1, line)
			}
			raws = append(raws, json.RawMessage(line))
			lines = append(lines, i+1)
		}
	}
	where := func(i int) string {
		if lines != nil {
			return "line " + strconv.Itoa(lines[i])
		}
		return "task " + strconv.Itoa(i+1)
	}
	tasks := make([]Task, 0, len(raws))
	for i, raw := range raws {
		var ct commandTask
		if err := json.Unmarshal(raw, &ct); err != nil {
			return nil, fmt.Errorf("%s: %w", where(i), err)
		}
		t, err := ct.task()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(i), err)
		}
		tasks = append(tasks, t)
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	if err := checkUnique(ids, "tasks", "its output", "make the list command print each task once, each with an id of its own: "+whyOneID,
		where); err != nil {
		return nil, err
	}
	if err := openCycle(tasks, where); err != nil {
		return nil, err
	}
	return tasks, nil
}

// openCycle is a *DepCycleError for open tasks of the list that wait for
// each other, which the autopilot would otherwise leave blocked for ever
// without saying why; a dep on a closed task is met, so a cycle through
// one blocks nothing.
func openCycle(tasks []Task, where func(int) string) error {
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		if !t.Closed {
			index[t.ID] = i
		}
	}
	var ids []string
	deps := map[string][]string{}
	for _, t := range tasks {
		if t.Closed {
			continue
		}
		ids = append(ids, t.ID)
		for _, d := range t.Deps {
			if _, open := index[d]; open {
				deps[t.ID] = append(deps[t.ID], d)
			}
		}
	}
	cycle := depCycle(ids, deps)
	if cycle == nil {
		return nil
	}
	places := make([]string, len(cycle)-1)
	for i, id := range cycle[:len(cycle)-1] {
		places[i] = where(index[id])
	}
	return &DepCycleError{Cycle: cycle, Kind: "tasks", In: "its output", Places: places, Fix: cycleFix(cycle, "deps")}
}

func (ct commandTask) task() (Task, error) {
	var id string
	if err := json.Unmarshal(ct.ID, &id); err != nil {
		var n json.Number
		if err := json.Unmarshal(ct.ID, &n); err != nil || len(ct.ID) == 0 {
			return Task{}, fmt.Errorf("id must be a string or a number, not %s", orNothing(ct.ID))
		}
		id = n.String()
	}
	if id == "" {
		return Task{}, fmt.Errorf("the task has no id")
	}
	t := Task{
		ID:          id,
		Title:       ct.Title,
		Description: strings.TrimSpace(ct.Description),
		Status:      ct.Status,
		Closed:      ct.Status == "closed" || ct.Status == "done",
		Tags:        append(append([]string(nil), ct.Tags...), ct.Labels...),
		Deps:        ct.Deps,
		Backend:     agentField(ct.Backend),
		Model:       agentField(ct.Model),
	}
	if ct.Priority != nil {
		t.Priority = int(*ct.Priority)
	}
	t = withAgent(t)
	if ac := bytes.TrimSpace(ct.AcceptanceCriteria); len(ac) > 0 && string(ac) != "null" {
		var text string
		var items []string
		switch {
		case json.Unmarshal(ac, &text) == nil:
			t.Criteria = parseCriteria(text)
		case json.Unmarshal(ac, &items) == nil:
			t.Criteria = criteriaOf(items)
		default:
			return Task{}, fmt.Errorf("acceptance_criteria must be a string or an array of strings, not %s", ac)
		}
	}
	return t, nil
}

func orNothing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}

func (s *commandSource) Ready(ctx context.Context) ([]Task, error) {
	ready, _, err := s.Split(ctx)
	return ready, err
}

func (s *commandSource) Blocked(ctx context.Context) ([]Task, error) {
	_, blocked, err := s.Split(ctx)
	return blocked, err
}

// Split is the tasks not closed, those with no open dep and the others,
// each by priority, from one run of list.
func (s *commandSource) Split(ctx context.Context) (ready, blocked []Task, err error) {
	all, err := s.list(ctx)
	if err != nil {
		return nil, nil, err
	}
	ready, blocked = splitOpen(all)
	return ready, blocked, nil
}

// splitOpen splits the tasks not closed into those with no dep and the
// others, each by priority.
func splitOpen(all []Task) (ready, blocked []Task) {
	for _, t := range all {
		switch {
		case t.Closed:
		case len(t.Deps) == 0:
			ready = append(ready, t)
		default:
			blocked = append(blocked, t)
		}
	}
	byPriority(ready)
	byPriority(blocked)
	return ready, blocked
}

func (s *commandSource) Show(ctx context.Context, id string) (Task, error) {
	if strings.TrimSpace(s.spec.Show) != "" {
		return s.showOne(ctx, id)
	}
	all, err := s.list(ctx)
	if err != nil {
		return Task{}, err
	}
	for _, t := range all {
		if t.ID == id {
			return t, nil
		}
	}
	return Task{}, fmt.Errorf("autopilot.source list does not list %q: %w", id, ErrNoTask)
}

// showOne is Show through the show command: the task, and its deps that
// show says are open, each shown in turn.
func (s *commandSource) showOne(ctx context.Context, id string) (Task, error) {
	t, found, err := s.shown(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if !found {
		return Task{}, fmt.Errorf("autopilot.source show prints no task %q: %w", id, ErrNoTask)
	}
	var open []string
	for _, d := range t.Deps {
		dep, found, err := s.shown(ctx, d)
		if err != nil {
			return Task{}, err
		}
		if found && !dep.Closed {
			open = append(open, d)
		}
	}
	t.Deps = open
	return t, nil
}

// shown runs the show command for id and finds that task in what it
// printed; false when it printed none with that id.
func (s *commandSource) shown(ctx context.Context, id string) (Task, bool, error) {
	out, err := runShell(ctx, s.dir, s.spec.Show, "RALPH_TASK_ID="+id)
	if err != nil {
		return Task{}, false, fmt.Errorf("autopilot.source show for %s: %w", id, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return Task{}, false, nil
	}
	tasks, err := parseCommandList(out)
	if err != nil {
		return Task{}, false, fmt.Errorf("autopilot.source show for %s (%s): %w", id, s.spec.Show, err)
	}
	for _, t := range tasks {
		if t.ID == id {
			return t, true, nil
		}
	}
	return Task{}, false, nil
}

func (s *commandSource) Claim(ctx context.Context, id string) error {
	return s.do(ctx, "claim", s.spec.Claim, id, "")
}

func (s *commandSource) Close(ctx context.Context, id, reason string) error {
	return s.do(ctx, "close", s.spec.Close, id, reason)
}

func (s *commandSource) Fail(ctx context.Context, id, reason string) error {
	return s.do(ctx, "fail", s.spec.Fail, id, reason)
}

// do runs a claim, close or fail command, after checking that the list
// has the task.
func (s *commandSource) do(ctx context.Context, what, script, id, reason string) error {
	if _, err := s.Show(ctx, id); err != nil {
		return err
	}
	if strings.TrimSpace(script) == "" {
		return nil
	}
	_, err := runShell(ctx, s.dir, script, "RALPH_TASK_ID="+id, "RALPH_TASK_REASON="+reason)
	if err != nil {
		return fmt.Errorf("autopilot.source %s for %s: %w", what, id, err)
	}
	return nil
}

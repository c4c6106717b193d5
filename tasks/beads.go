package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// beadsSource is beads (bd). Its database is outside git; what it keeps
// tracked is .beads/interactions.jsonl, to which every update appends.
//
//   - Ready is `bd ready --json --limit 0` (every ready issue: bd shows
//     10 by default), sorted here by priority then id: bd's own default
//     order puts recent issues first.
//   - Claim is `bd update ID --status in_progress --json`.
//   - Close is `bd close ID --reason TEXT --json`.
//   - Fail is `bd update ID --status open --append-notes "ralph: failed:
//     <reason>" --json`: the issue is open, and ready, again, and the
//     reason is in its notes.
//   - Blocked is `bd blocked --json`, each issue's deps its blocked_by.
//
// Lists come as a bare array (bd 1.0.5) or in an envelope
// {"schema_version": N, "data": [...]} (other versions); both are read.
// bd resolves partial ids and reports an unknown one on stderr, so every
// command's output must name the issue asked for.
type beadsSource struct {
	dir string
}

// beadsReadyLimit is passed to bd ready, which lists 10 issues unless
// told: 0 is no limit (bd adds its SQL LIMIT only for a positive one). A
// limit would hide the rest of a backlog of thousands from the plan and
// from the run, which starts no task bd ready leaves out.
const beadsReadyLimit = "0"

func (s *beadsSource) Name() string    { return "beads" }
func (s *beadsSource) Tool() string    { return "bd" }
func (s *beadsSource) Files() []string { return []string{".beads"} }

func (s *beadsSource) bd(ctx context.Context, args ...string) ([]byte, error) {
	out, err := runTool(ctx, s.dir, "bd", args...)
	if err != nil && stderrSays(err, "no issue found", "not found") {
		return nil, fmt.Errorf("%w (%w)", err, ErrNoTask)
	}
	return out, err
}

func (s *beadsSource) Ready(ctx context.Context) ([]Task, error) {
	args := []string{"ready", "--json", "--limit", beadsReadyLimit}
	out, err := s.bd(ctx, args...)
	if err != nil {
		return nil, err
	}
	issues, err := parseBeadsList(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmdline("bd", args), err)
	}
	tasks := make([]Task, 0, len(issues))
	ids := make([]string, 0, len(issues))
	for _, is := range issues {
		tasks = append(tasks, is.task())
		ids = append(ids, is.ID)
	}
	// bd's database keeps ids unique; a bd that lists one twice is broken,
	// and ralph would run one of the two twice.
	if err := checkUnique(ids, "issues", "the output of "+cmdline("bd", args), "bd keeps ids unique, so this bd is at fault: look at what bd ready --json prints, and update bd",
		func(i int) string { return "issue " + strconv.Itoa(i+1) }); err != nil {
		return nil, err
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		if tasks[i].Priority != tasks[j].Priority {
			return tasks[i].Priority < tasks[j].Priority
		}
		return tasks[i].ID < tasks[j].ID
	})
	return tasks, nil
}

func (s *beadsSource) Blocked(ctx context.Context) ([]Task, error) {
	args := []string{"blocked", "--json"}
	out, err := s.bd(ctx, args...)
	if err != nil {
		return nil, err
	}
	issues, err := parseBeadsList(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmdline("bd", args), err)
	}
	tasks := make([]Task, 0, len(issues))
	for _, is := range issues {
		t := is.task()
		t.Deps = is.BlockedBy
		tasks = append(tasks, t)
	}
	return tasks, nil
}

func (s *beadsSource) Show(ctx context.Context, id string) (Task, error) {
	is, err := s.resolve(ctx, id)
	if err != nil {
		return Task{}, err
	}
	return is.task(), nil
}

func (s *beadsSource) Claim(ctx context.Context, id string) error {
	_, err := s.one(ctx, id, "update", id, "--status", "in_progress", "--json")
	return err
}

func (s *beadsSource) Close(ctx context.Context, id, reason string) error {
	_, err := s.one(ctx, id, "close", id, "--reason", reason, "--json")
	return err
}

func (s *beadsSource) Fail(ctx context.Context, id, reason string) error {
	_, err := s.one(ctx, id, "update", id, "--status", "open", "--append-notes", "ralph: failed: "+reason, "--json")
	return err
}

// one runs a bd command about one issue and returns that issue as bd
// printed it, checking that it is the one asked for: bd matches partial
// ids, and reports an unknown id on stderr.
func (s *beadsSource) one(ctx context.Context, id string, args ...string) (beadsIssue, error) {
	if _, err := s.resolve(ctx, id); err != nil {
		return beadsIssue{}, err
	}
	is, found, err := s.printed(ctx, id, args)
	if err == nil && !found {
		err = fmt.Errorf("%s printed no issue %q: %w", cmdline("bd", args), id, ErrNoTask)
	}
	return is, err
}

// resolve is bd show: the issue whose id is id exactly (bd would also show
// one that id is a part of). Every change is checked with it first.
func (s *beadsSource) resolve(ctx context.Context, id string) (beadsIssue, error) {
	is, found, err := s.printed(ctx, id, []string{"show", id, "--json"})
	if err == nil && !found {
		err = fmt.Errorf("bd has no issue %q: %w", id, ErrNoTask)
	}
	return is, err
}

// printed runs bd with args and finds the issue whose id is id exactly
// among the issues it printed; false when there is none.
func (s *beadsSource) printed(ctx context.Context, id string, args []string) (beadsIssue, bool, error) {
	out, err := s.bd(ctx, args...)
	if err != nil {
		return beadsIssue{}, false, err
	}
	issues, err := parseBeadsList(out)
	if err != nil {
		return beadsIssue{}, false, fmt.Errorf("%s: %w", cmdline("bd", args), err)
	}
	for _, is := range issues {
		if is.ID == id {
			return is, true, nil
		}
	}
	return beadsIssue{}, false, nil
}

// beadsIssue is the part of bd's JSON issue that ralph reads.
type beadsIssue struct {
	ID                 string            `json:"id"`
	Title              string            `json:"title"`
	Description        string            `json:"description"`
	AcceptanceCriteria string            `json:"acceptance_criteria"`
	Status             string            `json:"status"`
	Priority           *int              `json:"priority"`
	Labels             []string          `json:"labels"`
	Dependencies       []beadsDependency `json:"dependencies"`
	// BlockedBy is what bd blocked says an issue waits for.
	BlockedBy []string `json:"blocked_by"`
}

// beadsDependency is an entry of bd show's dependencies: the issue depended
// on, with the kind of dependency.
type beadsDependency struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	DependencyType string `json:"dependency_type"`
}

func (is beadsIssue) task() Task {
	t := Task{
		ID:          is.ID,
		Title:       is.Title,
		Description: strings.TrimSpace(is.Description),
		Priority:    2, // bd's default
		Status:      is.Status,
		Closed:      is.Status == "closed",
		Tags:        is.Labels,
		Criteria:    parseCriteria(is.AcceptanceCriteria),
	}
	if is.Priority != nil {
		t.Priority = *is.Priority
	}
	t = withAgent(t)
	for _, d := range is.Dependencies {
		if (d.DependencyType == "" || d.DependencyType == "blocks") && d.Status != "closed" {
			t.Deps = append(t.Deps, d.ID)
		}
	}
	return t
}

// parseBeadsList reads bd's JSON: an array of issues, one issue, or either
// of those in an envelope {"schema_version": N, "data": ...}.
func parseBeadsList(out []byte) ([]beadsIssue, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("bd printed nothing where JSON was expected")
	}
	if out[0] == '{' {
		var env struct {
			SchemaVersion *int            `json:"schema_version"`
			Data          json.RawMessage `json:"data"`
			Error         json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			return nil, fmt.Errorf("bd printed JSON that is not an issue or an envelope: %w", err)
		}
		if len(env.Data) > 0 && string(env.Data) != "null" {
			return parseBeadsList(env.Data)
		}
		if len(env.Error) > 0 && string(env.Error) != "null" {
			return nil, fmt.Errorf("bd reported an error: %s", env.Error)
		}
		var one beadsIssue
		if err := json.Unmarshal(out, &one); err != nil {
			return nil, fmt.Errorf("bd printed an object that is not an issue: %w", err)
		}
		if one.ID == "" {
			return nil, fmt.Errorf("bd printed an object with neither data nor an id: %.200s", out)
		}
		return []beadsIssue{one}, nil
	}
	var issues []beadsIssue
	if err := json.Unmarshal(out, &issues); err != nil {
		return nil, fmt.Errorf("bd printed something that is not a JSON array of issues (%w): %.200s", err, out)
	}
	for i, is := range issues {
		if is.ID == "" {
			return nil, fmt.Errorf("issue %d of bd's list has no id", i+1)
		}
	}
	return issues, nil
}

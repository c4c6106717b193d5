package tasks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/internal/forge"
)

// forgeSource is a service's issues as tasks (github, gitlab, linear):
// ready is open, with the config's labels, unassigned or assigned to the
// source's user, and blocked by no open issue; claim assigns the issue to
// that user and says so in a comment; close comments with what was merged
// (or the pull request) and closes it; fail comments with the reason and
// unassigns. Nothing of it lives in the repository.
type forgeSource struct {
	kind    string
	tracker forge.Tracker
	// user is who ralph assigns issues to; "" until it is asked of the
	// service (the token's user).
	user   string
	userMu sync.Mutex
}

// NewForgeSource is the source of kind (github, gitlab, linear) over
// tracker; user is whose issues are taken besides unassigned ones, ""
// for the token's own.
func NewForgeSource(kind string, tracker forge.Tracker, user string) Source {
	return &forgeSource{kind: kind, tracker: tracker, user: user}
}

func (s *forgeSource) Name() string    { return s.kind }
func (s *forgeSource) Tool() string    { return "" }
func (s *forgeSource) Files() []string { return nil }

// Remote reports that the source keeps nothing in the repository, so the
// autopilot has nothing of it to commit or watch.
func (s *forgeSource) Remote() bool { return true }

// me is the user ralph works as on the service.
func (s *forgeSource) me(ctx context.Context) (string, error) {
	s.userMu.Lock()
	defer s.userMu.Unlock()
	if s.user != "" {
		return s.user, nil
	}
	me, err := s.tracker.Me(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: who the token belongs to: %w", s.kind, err)
	}
	s.user = me
	return me, nil
}

func (s *forgeSource) Ready(ctx context.Context) ([]Task, error) {
	ready, _, err := s.sorted(ctx)
	return ready, err
}

// Blocked lists the open issues that wait for another open issue. Those
// assigned to someone else are not listed: they wait for no task, and are
// not ralph's to take.
func (s *forgeSource) Blocked(ctx context.Context) ([]Task, error) {
	_, blocked, err := s.sorted(ctx)
	return blocked, err
}

// Split is Ready and Blocked from one listing of the open issues.
func (s *forgeSource) Split(ctx context.Context) (ready, blocked []Task, err error) {
	return s.sorted(ctx)
}

func (s *forgeSource) sorted(ctx context.Context) (ready, blocked []Task, err error) {
	issues, err := s.tracker.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	me, err := s.me(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, is := range issues {
		t, err := s.task(is)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case len(is.Assignees) > 0 && !slices.Contains(is.Assignees, me):
			continue
		case len(is.BlockedBy) > 0:
			blocked = append(blocked, t)
			continue
		}
		ready = append(ready, t)
	}
	byPriority(ready)
	byPriority(blocked)
	return ready, blocked, nil
}

func (s *forgeSource) Show(ctx context.Context, id string) (Task, error) {
	is, err := s.tracker.Issue(ctx, id)
	if errors.Is(err, forge.ErrNotFound) {
		return Task{}, fmt.Errorf("%s issue %s: %w", s.kind, id, ErrNoTask)
	}
	if err != nil {
		return Task{}, err
	}
	return s.task(is)
}

func (s *forgeSource) Claim(ctx context.Context, id string) error {
	me, err := s.me(ctx)
	if err != nil {
		return err
	}
	is, err := s.tracker.Issue(ctx, id)
	if err != nil {
		return err
	}
	if slices.Contains(is.Assignees, me) {
		// Claimed before a restart: no second comment.
		return nil
	}
	if err := s.tracker.Assign(ctx, id, me); err != nil {
		return err
	}
	return s.tracker.Comment(ctx, id, "ralph is working on this.")
}

func (s *forgeSource) Close(ctx context.Context, id, reason string) error {
	is, err := s.tracker.Issue(ctx, id)
	if err != nil {
		return err
	}
	if !is.Open {
		return nil
	}
	if err := s.tracker.Comment(ctx, id, "Done by ralph: "+reason); err != nil {
		return err
	}
	return s.tracker.Close(ctx, id)
}

func (s *forgeSource) Fail(ctx context.Context, id, reason string) error {
	me, err := s.me(ctx)
	if err != nil {
		return err
	}
	if err := s.tracker.Comment(ctx, id, "ralph gave up on this: "+reason); err != nil {
		return err
	}
	return s.tracker.Unassign(ctx, id, me)
}

// Reopen opens a closed issue again and unassigns it, so it is ready
// once more: its pull request was closed without being merged.
func (s *forgeSource) Reopen(ctx context.Context, id, reason string) error {
	me, err := s.me(ctx)
	if err != nil {
		return err
	}
	is, err := s.tracker.Issue(ctx, id)
	if err != nil {
		return err
	}
	if !is.Open {
		if err := s.tracker.Reopen(ctx, id); err != nil {
			return err
		}
	}
	if err := s.tracker.Comment(ctx, id, "ralph reopened this: "+reason); err != nil {
		return err
	}
	return s.tracker.Unassign(ctx, id, me)
}

// task is an issue as a task: its body split into the description and the
// criteria under an "Acceptance criteria" heading; its priority the
// tracker's own, else the first P0…P3 label's, else 2 (tk's default).
func (s *forgeSource) task(is forge.Issue) (Task, error) {
	if err := ValidID(is.ID); err != nil {
		return Task{}, fmt.Errorf("%s issue %s: %w", s.kind, is.URL, err)
	}
	desc, criteria := splitIssueBody(is.Body)
	t := Task{ID: is.ID, Title: is.Title, Description: desc, Criteria: criteria, Priority: 2,
		Status: "open", Closed: !is.Open, Tags: is.Labels, Deps: is.BlockedBy}
	if !is.Open {
		t.Status = "closed"
	}
	if p, ok := labelPriority(is.Labels); ok {
		t.Priority = p
	} else if is.Priority >= 0 {
		t.Priority = is.Priority
	}
	return withAgent(t), nil
}

// priorityLabel is a priority written as a label: "P0" … "P9", also as
// "priority: P1" or "priority/p2", or as GitLab's scoped labels write it,
// "priority::1".
var priorityLabel = regexp.MustCompile(`(?i)^(?:(?:priority[:/ ]\s*)?p([0-9])|priority::([0-9]))$`)

// labelPriority is the highest priority among labels, if any names one.
func labelPriority(labels []string) (int, bool) {
	best, found := 0, false
	for _, l := range labels {
		m := priorityLabel.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		p, _ := strconv.Atoi(m[1] + m[2])
		if !found || p < best {
			best, found = p, true
		}
	}
	return best, found
}

// acceptanceHeading is a markdown heading that starts an issue's
// acceptance criteria.
var acceptanceHeading = regexp.MustCompile(`(?i)^#{1,6}\s*acceptance criteria\s*:?\s*$`)

// splitIssueBody splits an issue's markdown into its description and the
// criteria listed under an "Acceptance criteria" heading (up to the next
// heading of the same or a higher level).
func splitIssueBody(body string) (string, []Criterion) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	var desc, crit []string
	in, level, fence := false, 0, false
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(trimmed, "#") {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			switch {
			case acceptanceHeading.MatchString(trimmed):
				in, level = true, n
				continue
			case in && n <= level:
				in = false
			}
		}
		if in {
			crit = append(crit, l)
		} else {
			desc = append(desc, l)
		}
	}
	return strings.TrimSpace(strings.Join(desc, "\n")), parseCriteria(strings.Join(crit, "\n"))
}

// Package forgetest is an in-memory forge for tests of what uses one: a
// Tracker and PullRequests that keep their issues and pull requests in
// maps, record every call that changes them, and can be told to merge,
// close or make a pull request conflict as a person or the service would.
package forgetest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/ralph-loop/ralph/internal/forge"
)

// Forge is a tracker and its repository's pull requests, in memory.
type Forge struct {
	mu     sync.Mutex
	User   string
	issues []*forge.Issue
	pulls  []*forge.PullRequest
	// Calls are the changing calls made, in order ("assign 3 ralph-bot",
	// "comment 3: …", "close 3", "open pr ralph/3 → main").
	calls []string
}

// New is a forge whose token belongs to user.
func New(user string) *Forge { return &Forge{User: user} }

// Add adds an issue.
func (f *Forge) Add(is forge.Issue) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is.Open = true
	f.issues = append(f.issues, &is)
}

// Calls are the changing calls made so far.
func (f *Forge) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *Forge) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *Forge) find(id string) (*forge.Issue, error) {
	for _, is := range f.issues {
		if is.ID == id {
			return is, nil
		}
	}
	return nil, fmt.Errorf("issue %s: %w", id, forge.ErrNotFound)
}

// Open lists the open issues, their blockers reduced to the open ones.
func (f *Forge) Open(context.Context) ([]forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []forge.Issue
	for _, is := range f.issues {
		if is.Open {
			out = append(out, f.view(is))
		}
	}
	return out, nil
}

func (f *Forge) view(is *forge.Issue) forge.Issue {
	v := *is
	v.Labels, v.Assignees, v.BlockedBy = slices.Clone(is.Labels), slices.Clone(is.Assignees), nil
	for _, b := range is.BlockedBy {
		if other, err := f.find(b); err == nil && other.Open {
			v.BlockedBy = append(v.BlockedBy, b)
		}
	}
	return v
}

func (f *Forge) Issue(_ context.Context, id string) (forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is, err := f.find(id)
	if err != nil {
		return forge.Issue{}, err
	}
	return f.view(is), nil
}

func (f *Forge) Me(context.Context) (string, error) { return f.User, nil }

func (f *Forge) Assign(_ context.Context, id, user string) error {
	return f.change(id, func(is *forge.Issue) {
		if !slices.Contains(is.Assignees, user) {
			is.Assignees = append(is.Assignees, user)
		}
	}, "assign %s %s", id, user)
}

func (f *Forge) Unassign(_ context.Context, id, user string) error {
	return f.change(id, func(is *forge.Issue) {
		is.Assignees = slices.DeleteFunc(is.Assignees, func(a string) bool { return a == user })
	}, "unassign %s %s", id, user)
}

func (f *Forge) Comment(_ context.Context, id, body string) error {
	return f.change(id, func(*forge.Issue) {}, "comment %s: %s", id, body)
}

func (f *Forge) Close(_ context.Context, id string) error {
	return f.change(id, func(is *forge.Issue) { is.Open = false }, "close %s", id)
}

func (f *Forge) Reopen(_ context.Context, id string) error {
	return f.change(id, func(is *forge.Issue) { is.Open = true }, "reopen %s", id)
}

func (f *Forge) change(id string, do func(*forge.Issue), format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	is, err := f.find(id)
	if err != nil {
		return err
	}
	do(is)
	f.record(format, args...)
	return nil
}

// OpenPR opens change as a pull request, or returns the open one from
// its head onto its base.
func (f *Forge) OpenPR(_ context.Context, c forge.Change) (forge.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, pr := range f.pulls {
		if pr.Head == c.Head && pr.Base == c.Base && pr.State == forge.StateOpen {
			return *pr, nil
		}
	}
	n := len(f.pulls) + 1
	pr := &forge.PullRequest{Number: n, URL: "https://forge.test/pull/" + strconv.Itoa(n), State: forge.StateOpen, Head: c.Head, Base: c.Base}
	f.pulls = append(f.pulls, pr)
	f.record("open pr %s → %s: %s", c.Head, c.Base, c.Title)
	return *pr, nil
}

// PR returns pull request number.
func (f *Forge) PR(_ context.Context, number int) (forge.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if number < 1 || number > len(f.pulls) {
		return forge.PullRequest{}, fmt.Errorf("pull request %d: %w", number, forge.ErrNotFound)
	}
	return *f.pulls[number-1], nil
}

// SetPR changes pull request number as the service or a person would:
// merged, closed, conflicting.
func (f *Forge) SetPR(number int, change func(*forge.PullRequest)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.pulls[number-1])
}

// Pulls is the forge's pull requests, as forge.PullRequests.
func (f *Forge) Pulls() forge.PullRequests { return pulls{f} }

type pulls struct{ f *Forge }

func (p pulls) Open(ctx context.Context, c forge.Change) (forge.PullRequest, error) {
	return p.f.OpenPR(ctx, c)
}

func (p pulls) Get(ctx context.Context, number int) (forge.PullRequest, error) {
	return p.f.PR(ctx, number)
}

var (
	_ forge.Tracker      = (*Forge)(nil)
	_ forge.PullRequests = pulls{}
)

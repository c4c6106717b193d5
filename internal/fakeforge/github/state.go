package github

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// repository is one repository's issues and pull requests, which share
// their numbers: items[n-1] is number n.
type repository struct {
	name  string // owner/name as first given
	items []*item
}

// item is an issue, or a pull request when pull is set.
type item struct {
	repo        *repository
	number      int
	id          int64
	title, body string
	author      string
	state       string // open, closed
	stateReason string // "", completed, not_planned, reopened
	closedBy    string
	labels      []string
	assignees   []string
	comments    []comment
	// blockedBy are the issues this one is blocked by; subIssues its
	// sub-issues; parent the issue it is a sub-issue of.
	blockedBy, subIssues []*item
	parent               *item
	created, updated     time.Time
	closed               time.Time
	pull                 *pull
}

type comment struct {
	id      int64
	author  string
	body    string
	created time.Time
}

// Issue is an issue as a test adds it and reads it back.
type Issue struct {
	// Repo is the issue's repository; "" is Options.Repo.
	Repo string
	// ID is the issue's number, or "owner/name#number" in another
	// repository than Options.Repo's; AddIssue returns it.
	ID          string
	Title, Body string
	// State is "open" (when "") or "closed"; StateReason GitHub's
	// (completed, not_planned, reopened).
	State, StateReason string
	Labels             []string
	Assignees          []string
	// Author is who opened it; Options.User when "".
	Author string
}

// repo is the repository name, made when it is new. The caller holds mu
// (or the server has not started).
func (s *Server) repo(name string) *repository {
	key := strings.ToLower(name)
	if r := s.repos[key]; r != nil {
		return r
	}
	r := &repository{name: name}
	s.repos[key] = r
	return r
}

func (s *Server) newID() int64 {
	s.ids++
	return s.ids
}

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// add makes a new item of r, numbered next.
func (s *Server) add(r *repository, title, body, author string) *item {
	t := now()
	it := &item{repo: r, number: len(r.items) + 1, id: s.newID(), title: title, body: body, author: author,
		state: "open", created: t, updated: t}
	r.items = append(r.items, it)
	return it
}

// AddIssue adds an open issue (closed, with State "closed") and returns
// its id.
func (s *Server) AddIssue(is Issue) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(cmp.Or(is.Repo, s.opts.Repo))
	it := s.add(r, is.Title, is.Body, cmp.Or(is.Author, s.opts.User))
	it.labels, it.assignees = slices.Clone(is.Labels), slices.Clone(is.Assignees)
	if is.State == "closed" {
		it.state, it.stateReason, it.closed, it.closedBy = "closed", cmp.Or(is.StateReason, "completed"), it.created, it.author
	}
	return s.ref(it)
}

// ref is it's id as the tests and ralph name it: its number in
// Options.Repo, else owner/name#number.
func (s *Server) ref(it *item) string {
	if strings.EqualFold(it.repo.name, s.opts.Repo) {
		return strconv.Itoa(it.number)
	}
	return it.repo.name + "#" + strconv.Itoa(it.number)
}

// find is the item id names ("3", "owner/name#3"). The caller holds mu.
func (s *Server) find(id string) (*item, error) {
	repo, num := s.opts.Repo, id
	if r, n, ok := strings.Cut(id, "#"); ok {
		repo, num = r, n
	}
	r := s.repos[strings.ToLower(repo)]
	n, err := strconv.Atoi(num)
	if r == nil || err != nil || n < 1 || n > len(r.items) {
		return nil, fmt.Errorf("fake GitHub: no issue %s", id)
	}
	return r.items[n-1], nil
}

// Block records that issue is blocked by blocker (GitHub's issue
// dependencies).
func (s *Server) Block(issue, blocker string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.find(issue)
	if err != nil {
		return err
	}
	b, err := s.find(blocker)
	if err != nil {
		return err
	}
	if !slices.Contains(it.blockedBy, b) {
		it.blockedBy = append(it.blockedBy, b)
	}
	return nil
}

// AddSubIssue makes child a sub-issue of parent.
func (s *Server) AddSubIssue(parent, child string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(parent)
	if err != nil {
		return err
	}
	c, err := s.find(child)
	if err != nil {
		return err
	}
	if c.parent != nil {
		return fmt.Errorf("fake GitHub: %s is a sub-issue of #%d already; GitHub gives an issue one parent", child, c.parent.number)
	}
	p.subIssues, c.parent = append(p.subIssues, c), p
	return nil
}

// CloseIssue closes an issue as a person would, as completed.
func (s *Server) CloseIssue(id string) error { return s.setIssueState(id, "closed", "completed") }

// ReopenIssue opens a closed issue again as a person would.
func (s *Server) ReopenIssue(id string) error { return s.setIssueState(id, "open", "reopened") }

func (s *Server) setIssueState(id, state, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.find(id)
	if err != nil {
		return err
	}
	it.setState(state, reason, s.opts.User)
	return nil
}

// setState changes it's state as GitHub does: closing records when and
// by whom, reopening says "reopened".
func (it *item) setState(state, reason, by string) {
	if state == it.state {
		if reason != "" && state == "closed" {
			it.stateReason = reason
		}
		return
	}
	it.state, it.updated = state, now()
	switch state {
	case "closed":
		it.stateReason, it.closed, it.closedBy = cmp.Or(reason, "completed"), it.updated, by
	default:
		it.stateReason, it.closed, it.closedBy = "reopened", time.Time{}, ""
	}
}

// Issue is issue id as it is now; false when there is none.
func (s *Server) Issue(id string) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.find(id)
	if err != nil {
		return Issue{}, false
	}
	return Issue{Repo: it.repo.name, ID: s.ref(it), Title: it.title, Body: it.body, State: it.state, StateReason: it.stateReason,
		Labels: slices.Clone(it.labels), Assignees: slices.Clone(it.assignees), Author: it.author}, true
}

// Comments are the bodies of issue id's comments, oldest first.
func (s *Server) Comments(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.find(id)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range it.comments {
		out = append(out, c.body)
	}
	return out
}

// assignable reports whether login can be assigned an issue.
func (s *Server) assignable(login string) bool {
	return len(s.opts.Collaborators) == 0 || strings.EqualFold(login, s.opts.User) ||
		slices.ContainsFunc(s.opts.Collaborators, func(c string) bool { return strings.EqualFold(c, login) })
}

// withItem is h for the item the path's number names; 404 when none.
func (s *Server) withItem(h func(http.ResponseWriter, *http.Request, *item)) func(http.ResponseWriter, *http.Request, *repository) {
	return func(w http.ResponseWriter, r *http.Request, rp *repository) {
		n, err := strconv.Atoi(r.PathValue("number"))
		if err != nil || n < 1 || n > len(rp.items) {
			notFound(w)
			return
		}
		h(w, r, rp.items[n-1])
	}
}

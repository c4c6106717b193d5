package gitlab

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

type issue struct {
	id, iid            int64
	title, description string
	// state is "opened" or "closed".
	state     string
	labels    []string
	assignees []int64 // user ids
	author    int64
	notes     []note
	created   time.Time
	updated   time.Time
	closed    *time.Time
	closedBy  int64
}

type note struct {
	id      int64
	body    string
	author  int64
	created time.Time
}

// link is an issue link: source relates to, or blocks, target.
type link struct {
	id             int64
	source, target int64 // iids
	blocks         bool
	created        time.Time
}

// NewIssue is an issue a test adds.
type NewIssue struct {
	Title, Description string
	Labels             []string
	// Assignees are usernames, added as users when unknown.
	Assignees []string
}

// AddIssue adds an open issue, authored by the project's maintainer, and
// returns its iid.
func (s *Server) AddIssue(n NewIssue) int {
	var assignees []int64
	for _, name := range n.Assignees {
		assignees = append(assignees, s.AddUser(name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	created := s.nextCreated()
	is := &issue{id: s.nextID(), iid: int64(len(s.issues) + 1), title: n.Title, description: n.Description, state: "opened",
		labels: slices.Clone(n.Labels), assignees: assignees, author: s.maintainer().id, created: created, updated: created}
	s.issues = append(s.issues, is)
	return int(is.iid)
}

// Block makes issue blocker block issue blocked, as a person does on
// GitLab Premium ("is blocked by" on blocked's page).
func (s *Server) Block(blocked, blocker int) {
	s.t.Helper()
	if !s.o.Premium {
		s.t.Fatalf("fake GitLab: blocking links are GitLab Premium's; start the fake with Options.Premium")
	}
	s.addLink(int64(blocker), int64(blocked), true)
}

// Relate relates two issues, as GitLab Free can.
func (s *Server) Relate(a, b int) { s.addLink(int64(a), int64(b), false) }

func (s *Server) addLink(source, target int64, blocks bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issue(source) == nil || s.issue(target) == nil {
		s.t.Fatalf("fake GitLab: no issue %d or %d to link", source, target)
	}
	s.links = append(s.links, link{id: s.nextID(), source: source, target: target, blocks: blocks, created: time.Now()})
}

// SetIssueState closes ("closed") or reopens ("opened") an issue, as a
// person would.
func (s *Server) SetIssueState(iid int, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setState(s.issue(int64(iid)), state, s.maintainer().id)
}

// IssueState is an issue as the fake keeps it.
type IssueState struct {
	State     string // opened or closed
	Labels    []string
	Assignees []string // usernames
	Notes     []string // bodies, oldest first
}

// Issue returns issue iid's state; the test fails when there is none.
func (s *Server) Issue(iid int) IssueState {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.issue(int64(iid))
	if is == nil {
		s.t.Fatalf("fake GitLab: no issue %d", iid)
		return IssueState{}
	}
	st := IssueState{State: is.state, Labels: slices.Clone(is.labels)}
	for _, id := range is.assignees {
		u, _ := s.userByID(id)
		st.Assignees = append(st.Assignees, u.username)
	}
	for _, n := range is.notes {
		st.Notes = append(st.Notes, n.body)
	}
	return st
}

// Notes are the bodies of issue iid's notes, oldest first.
func (s *Server) Notes(iid int) []string { return s.Issue(iid).Notes }

func (s *Server) issue(iid int64) *issue {
	if iid < 1 || iid > int64(len(s.issues)) {
		return nil
	}
	return s.issues[iid-1]
}

func (s *Server) withIssue(w http.ResponseWriter, rt route, do func(*issue)) {
	is := s.issue(rt.nums[0])
	if is == nil {
		notFound(w, "404 Not found")
		return
	}
	do(is)
}

func (s *Server) setState(is *issue, state string, by int64) {
	if is.state == state {
		return
	}
	now := time.Now()
	is.state, is.updated = state, now
	if state == "closed" {
		is.closed, is.closedBy = &now, by
	} else {
		is.closed, is.closedBy = nil, 0
	}
}

// listIssues is GET /projects/:id/issues: state, labels (every one),
// order_by created_at or updated_at, sort (desc by default), paginated.
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var list []*issue
	for _, is := range s.issues {
		state := q.Get("state")
		if (state == "" || state == "all" || state == is.state) && hasAll(is.labels, want) {
			list = append(list, is)
		}
	}
	slices.SortStableFunc(list, func(a, b *issue) int {
		c := a.created.Compare(b.created)
		if q.Get("order_by") == "updated_at" {
			c = a.updated.Compare(b.updated)
		}
		c = cmp.Or(c, cmp.Compare(a.id, b.id))
		if q.Get("sort") != "asc" {
			c = -c
		}
		return c
	})
	out := []any{}
	for _, is := range paginate(w, r, list) {
		out = append(out, s.issueJSON(is, s.fixture("issues.json")))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

func hasAll(labels, want []string) bool {
	for _, l := range want {
		if !slices.Contains(labels, strings.TrimSpace(l)) {
			return false
		}
	}
	return true
}

// issueJSON is issue is as GitLab answers it, built on base, a recorded
// issue.
func (s *Server) issueJSON(is *issue, base map[string]any) map[string]any {
	m := base
	m["id"], m["iid"], m["project_id"] = is.id, is.iid, s.o.ProjectID
	m["title"], m["description"], m["state"] = is.title, is.description, is.state
	m["labels"] = append([]string{}, is.labels...)
	assignees := []any{}
	for _, id := range is.assignees {
		u, _ := s.userByID(id)
		assignees = append(assignees, s.basicUserJSON(u))
	}
	m["assignees"], m["assignee"] = assignees, nil
	if len(assignees) > 0 {
		m["assignee"] = assignees[0]
	}
	author, _ := s.userByID(is.author)
	m["author"] = s.basicUserJSON(author)
	m["milestone"], m["due_date"], m["moved_to_id"] = nil, nil, nil
	m["created_at"], m["updated_at"], m["closed_at"] = timeJSON(is.created), timeJSON(is.updated), orNil(is.closed)
	m["closed_by"] = nil
	if closer, ok := s.userByID(is.closedBy); ok {
		m["closed_by"] = s.basicUserJSON(closer)
	}
	m["user_notes_count"], m["upvotes"], m["downvotes"], m["merge_requests_count"] = len(is.notes), 0, 0, 0
	m["web_url"] = s.webURL("issues/%d", is.iid)
	ref := "#" + strconv.FormatInt(is.iid, 10)
	m["references"] = map[string]any{"short": ref, "relative": ref, "full": s.o.Project + ref}
	api := s.URL + "/api/v4/projects/" + strconv.FormatInt(s.o.ProjectID, 10)
	self := api + "/issues/" + strconv.FormatInt(is.iid, 10)
	m["_links"] = map[string]any{"self": self, "notes": self + "/notes", "award_emoji": self + "/award_emoji", "project": api, "closed_as_duplicate_of": nil}
	m["has_tasks"], m["task_status"] = false, ""
	delete(m, "weight")
	if s.o.Premium {
		m["weight"] = nil
	}
	return m
}

// updateIssue is PUT /projects/:id/issues/:iid.
func (s *Server) updateIssue(w http.ResponseWriter, r *http.Request, is *issue) {
	p, err := paramsOf(r)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	changed := false
	if ids, ok := p.ids("assignee_ids"); ok {
		is.assignees, changed = s.assignable(ids), true
	} else if ids, ok := p.ids("assignee_id"); ok {
		is.assignees, changed = s.assignable(ids), true
	}
	if labels, ok := p.list("labels"); ok {
		is.labels, changed = labels, true
	}
	if add, ok := p.list("add_labels"); ok {
		for _, l := range add {
			if !slices.Contains(is.labels, l) {
				is.labels = append(is.labels, l)
			}
		}
		changed = true
	}
	if remove, ok := p.list("remove_labels"); ok {
		is.labels, changed = slices.DeleteFunc(is.labels, func(l string) bool { return slices.Contains(remove, l) }), true
	}
	if title, ok := p.str("title"); ok {
		is.title, changed = title, true
	}
	if desc, ok := p.str("description"); ok {
		is.description, changed = desc, true
	}
	if event, ok := p.str("state_event"); ok {
		switch event {
		case "close":
			s.setState(is, "closed", s.me().id)
		case "reopen":
			s.setState(is, "opened", s.me().id)
		default:
			badRequest(w, "state_event does not have a valid value")
			return
		}
		changed = true
	}
	if !changed {
		badRequest(w, "assignee_id, assignee_ids, confidential, created_at, description, discussion_locked, due_date, labels, add_labels, remove_labels, milestone_id, state_event, title, issue_type, weight, epic_id, epic_iid are missing, at least one parameter must be provided")
		return
	}
	is.updated = time.Now()
	fakeforge.JSON(w, http.StatusOK, s.issueJSON(is, s.fixture("issue.json")))
}

// assignable are the users of ids the fake knows, only the first of them
// on GitLab Free, which has one assignee per issue.
func (s *Server) assignable(ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		if _, ok := s.userByID(id); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if !s.o.Premium && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// createNote is POST /projects/:id/issues/:iid/notes.
func (s *Server) createNote(w http.ResponseWriter, r *http.Request, is *issue) {
	p, err := paramsOf(r)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	body, _ := p.str("body")
	if strings.TrimSpace(body) == "" {
		badRequest(w, "body is missing")
		return
	}
	n := note{id: s.nextID(), body: body, author: s.me().id, created: time.Now()}
	is.notes = append(is.notes, n)
	fakeforge.JSON(w, http.StatusCreated, s.noteJSON(is, n))
}

// listNotes is GET /projects/:id/issues/:iid/notes: newest first unless
// sort=asc, paginated.
func (s *Server) listNotes(w http.ResponseWriter, r *http.Request, is *issue) {
	notes := slices.Clone(is.notes)
	if r.URL.Query().Get("sort") != "asc" {
		slices.Reverse(notes)
	}
	out := []any{}
	for _, n := range paginate(w, r, notes) {
		out = append(out, s.noteJSON(is, n))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

func (s *Server) noteJSON(is *issue, n note) map[string]any {
	m := s.fixture("notes.json")
	author, _ := s.userByID(n.author)
	a := m["author"].(map[string]any)
	a["id"], a["username"], a["name"], a["email"] = author.id, author.username, author.name, author.username+"@example.com"
	m["id"], m["body"], m["system"] = n.id, n.body, false
	m["created_at"], m["updated_at"] = timeJSON(n.created), timeJSON(n.created)
	m["noteable_id"], m["noteable_iid"], m["noteable_type"], m["project_id"] = is.id, is.iid, "Issue", s.o.ProjectID
	m["confidential"], m["internal"] = false, false
	return m
}

// linksJSON is GET /projects/:id/issues/:iid/links: the issues linked to
// is, each with the link's type as seen from is (it "blocks" the other or
// "is_blocked_by" it), oldest link first.
func (s *Server) linksJSON(is *issue) []any {
	out := []any{}
	for _, l := range s.links {
		var other int64
		linkType := "relates_to"
		switch is.iid {
		case l.source:
			other = l.target
			if l.blocks {
				linkType = "blocks"
			}
		case l.target:
			other = l.source
			if l.blocks {
				linkType = "is_blocked_by"
			}
		default:
			continue
		}
		m := s.issueJSON(s.issue(other), s.fixture("issue_links.json"))
		// A relation is GitLab's basic issue entity, which has no links
		// to the issue's API.
		delete(m, "_links")
		m["issue_link_id"], m["link_type"] = l.id, linkType
		m["link_created_at"], m["link_updated_at"] = timeJSON(l.created), timeJSON(l.created)
		out = append(out, m)
	}
	return out
}

package github

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

func (s *Server) me(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := renamed(s.fixture("private-user"), "octocat", s.opts.User).(object)
	u["id"], u["node_id"] = s.userID(s.opts.User), nodeID("U", s.userID(s.opts.User))
	fakeforge.JSON(w, http.StatusOK, u)
}

// listIssues is GET /repos/{owner}/{repo}/issues: the issues and pull
// requests of the state asked (open by default) with every label asked,
// newest first unless direction=asc.
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request, rp *repository) {
	q := r.URL.Query()
	state := cmp.Or(q.Get("state"), "open")
	if !slices.Contains([]string{"open", "closed", "all"}, state) {
		invalid(w, "Validation Failed", map[string]any{"resource": "Issue", "field": "state", "code": "invalid"})
		return
	}
	var want []string
	for l := range strings.SplitSeq(q.Get("labels"), ",") {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, l)
		}
	}
	var items []*item
	for _, it := range rp.items {
		if (state == "all" || it.state == state) && hasLabels(it, want) {
			items = append(items, it)
		}
	}
	if q.Get("direction") != "asc" {
		slices.Reverse(items)
	}
	s.issueList(w, r, items)
}

func hasLabels(it *item, want []string) bool {
	for _, l := range want {
		if !slices.ContainsFunc(it.labels, func(have string) bool { return strings.EqualFold(have, l) }) {
			return false
		}
	}
	return true
}

// issueList answers one page of items as issues.
func (s *Server) issueList(w http.ResponseWriter, r *http.Request, items []*item) {
	out := []any{}
	for _, it := range page(w, r, items) {
		out = append(out, s.issueJSON(it))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

func (s *Server) getIssue(w http.ResponseWriter, _ *http.Request, it *item) {
	fakeforge.JSON(w, http.StatusOK, s.issueJSON(it))
}

// editIssue is PATCH /repos/{owner}/{repo}/issues/{number}: its title,
// body and state.
func (s *Server) editIssue(w http.ResponseWriter, r *http.Request, it *item) {
	var req struct {
		Title, Body, State *string
		StateReason        *string `json:"state_reason"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.State != nil && *req.State != "open" && *req.State != "closed" {
		invalid(w, "Validation Failed", map[string]any{"resource": "Issue", "field": "state", "code": "invalid"})
		return
	}
	if req.Title != nil {
		it.title = *req.Title
	}
	if req.Body != nil {
		it.body = *req.Body
	}
	if req.State != nil {
		it.setState(*req.State, deref(req.StateReason), s.opts.User)
	}
	it.updated = now()
	fakeforge.JSON(w, http.StatusOK, s.issueJSON(it))
}

func (s *Server) addAssignees(w http.ResponseWriter, r *http.Request, it *item) {
	var req struct{ Assignees []string }
	if !decode(w, r, &req) {
		return
	}
	for _, a := range req.Assignees {
		// GitHub leaves out, without a word, whom it cannot assign.
		if s.assignable(a) && !slices.ContainsFunc(it.assignees, func(have string) bool { return strings.EqualFold(have, a) }) {
			it.assignees = append(it.assignees, a)
		}
	}
	it.updated = now()
	fakeforge.JSON(w, http.StatusCreated, s.issueJSON(it))
}

func (s *Server) removeAssignees(w http.ResponseWriter, r *http.Request, it *item) {
	var req struct{ Assignees []string }
	if !decode(w, r, &req) {
		return
	}
	it.assignees = slices.DeleteFunc(it.assignees, func(have string) bool {
		return slices.ContainsFunc(req.Assignees, func(a string) bool { return strings.EqualFold(have, a) })
	})
	it.updated = now()
	fakeforge.JSON(w, http.StatusOK, s.issueJSON(it))
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, it *item) {
	out := []any{}
	for _, c := range page(w, r, it.comments) {
		out = append(out, s.commentJSON(it, c))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

func (s *Server) addComment(w http.ResponseWriter, r *http.Request, it *item) {
	var req struct{ Body string }
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Body) == "" {
		invalid(w, "Validation Failed", map[string]any{"resource": "IssueComment", "field": "body", "code": "missing_field"})
		return
	}
	c := comment{id: s.newID(), author: s.opts.User, body: req.Body, created: now()}
	it.comments, it.updated = append(it.comments, c), c.created
	fakeforge.JSON(w, http.StatusCreated, s.commentJSON(it, c))
}

// addLabels is POST /repos/{owner}/{repo}/issues/{number}/labels: the body
// is the labels' names, as an array (go-github sends that) or as
// {"labels": [...]}; the answer is all the issue's labels.
func (s *Server) addLabels(w http.ResponseWriter, r *http.Request, it *item) {
	var raw json.RawMessage
	if !decode(w, r, &raw) {
		return
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		var req struct{ Labels []string }
		if err := json.Unmarshal(raw, &req); err != nil {
			invalid(w, "Validation Failed", map[string]any{"resource": "Label", "field": "labels", "code": "invalid"})
			return
		}
		names = req.Labels
	}
	for _, n := range names {
		if !slices.ContainsFunc(it.labels, func(have string) bool { return strings.EqualFold(have, n) }) {
			it.labels = append(it.labels, n)
		}
	}
	it.updated = now()
	fakeforge.JSON(w, http.StatusOK, s.labelObjects(it.repo, it.labels))
}

func (s *Server) listBlockers(w http.ResponseWriter, r *http.Request, it *item) {
	s.issueList(w, r, it.blockedBy)
}

func (s *Server) listSubIssues(w http.ResponseWriter, r *http.Request, it *item) {
	s.issueList(w, r, it.subIssues)
}

// issueJSON is it as GitHub's issues API shows it: the "issue" example
// with what the fake keeps written over it.
func (s *Server) issueJSON(it *item) object {
	o := s.fixture("issue")
	n := strconv.Itoa(it.number)
	api := s.repoAPI(it.repo) + "/issues/" + n
	o["id"], o["node_id"], o["number"] = it.id, nodeID("I", it.id), it.number
	o["url"], o["repository_url"] = api, s.repoAPI(it.repo)
	o["labels_url"], o["comments_url"], o["events_url"] = api+"/labels{/name}", api+"/comments", api+"/events"
	o["html_url"] = s.repoWeb(it.repo) + "/issues/" + n
	o["title"], o["body"], o["state"], o["user"] = it.title, it.body, it.state, s.user(it.author)
	o["state_reason"] = nilIfEmpty(it.stateReason)
	o["labels"] = s.labelObjects(it.repo, it.labels)
	o["assignees"], o["assignee"] = s.userList(it.assignees), nil
	if len(it.assignees) > 0 {
		o["assignee"] = s.user(it.assignees[0])
	}
	o["milestone"], o["locked"], o["active_lock_reason"], o["pinned_comment"] = nil, false, nil, nil
	o["comments"] = len(it.comments)
	o["created_at"], o["updated_at"], o["closed_at"] = timestamp(it.created), timestamp(it.updated), timestamp(it.closed)
	o["closed_by"] = s.user(it.closedBy)
	if it.pull != nil {
		pulls := s.repoAPI(it.repo) + "/pulls/" + n
		web := s.repoWeb(it.repo) + "/pull/" + n
		o["html_url"] = web
		o["pull_request"] = object{"url": pulls, "html_url": web, "diff_url": web + ".diff", "patch_url": web + ".patch",
			"merged_at": timestamp(it.pull.mergedAt)}
		return o
	}
	delete(o, "pull_request")
	closed := 0
	for _, c := range it.subIssues {
		if c.state == "closed" {
			closed++
		}
	}
	percent := 0
	if len(it.subIssues) > 0 {
		percent = closed * 100 / len(it.subIssues)
	}
	o["sub_issues_summary"] = object{"total": len(it.subIssues), "completed": closed, "percent_completed": percent}
	blocking := s.blocking(it)
	o["issue_dependencies_summary"] = object{"blocked_by": openCount(it.blockedBy), "blocking": openCount(blocking),
		"total_blocked_by": len(it.blockedBy), "total_blocking": len(blocking)}
	if it.parent != nil {
		o["parent_issue_url"] = s.repoAPI(it.parent.repo) + "/issues/" + strconv.Itoa(it.parent.number)
	}
	return o
}

// blocking are the issues, in any repository, that it blocks.
func (s *Server) blocking(it *item) []*item {
	var out []*item
	for _, r := range s.repos {
		for _, other := range r.items {
			if slices.Contains(other.blockedBy, it) {
				out = append(out, other)
			}
		}
	}
	return out
}

func openCount(items []*item) int {
	n := 0
	for _, it := range items {
		if it.state == "open" {
			n++
		}
	}
	return n
}

// commentJSON is c, a comment on it, as the "issue-comment" example.
func (s *Server) commentJSON(it *item, c comment) object {
	o := s.fixture("issue-comment")
	id := strconv.FormatInt(c.id, 10)
	o["id"], o["node_id"] = c.id, nodeID("IC", c.id)
	o["url"] = s.repoAPI(it.repo) + "/issues/comments/" + id
	o["html_url"] = s.repoWeb(it.repo) + "/issues/" + strconv.Itoa(it.number) + "#issuecomment-" + id
	o["issue_url"] = s.repoAPI(it.repo) + "/issues/" + strconv.Itoa(it.number)
	o["body"], o["user"] = c.body, s.user(c.author)
	o["created_at"], o["updated_at"] = timestamp(c.created), timestamp(c.created)
	return o
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

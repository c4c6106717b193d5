package linear

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

// operation is one operation the fake serves: its kind, its one root
// field, and how it resolves that field from its arguments (with f.mu
// held).
type operation struct {
	kind, field string
	resolve     func(f *Fake, args map[string]any) (any, error)
}

// operations are those internal/forge/linear sends, by name.
var operations = map[string]operation{
	"Viewer":        {"query", "viewer", func(f *Fake, _ map[string]any) (any, error) { return f.userObject(f.viewer), nil }},
	"Users":         {"query", "users", (*Fake).resolveUsers},
	"Team":          {"query", "teams", (*Fake).resolveTeams},
	"Issues":        {"query", "issues", (*Fake).resolveIssues},
	"Issue":         {"query", "issue", (*Fake).resolveIssue},
	"IssueUpdate":   {"mutation", "issueUpdate", (*Fake).resolveIssueUpdate},
	"CommentCreate": {"mutation", "commentCreate", (*Fake).resolveCommentCreate},
}

// notFoundError is an entity the arguments name that the workspace has
// not, answered as Linear answers it.
type notFoundError struct{ entity string }

func (e *notFoundError) Error() string { return "Entity not found: " + e.entity }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		graphQLErrors(w, http.StatusBadRequest, "the body is not a GraphQL request: "+err.Error())
		return
	}
	if r.Header.Get("Authorization") != f.Key {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(f.fx.authentication)
		return
	}
	doc, err := parseDocument(req.Query, req.Variables)
	if err != nil {
		graphQLErrors(w, http.StatusBadRequest, "Syntax Error: "+err.Error())
		return
	}
	name := cmp.Or(req.OperationName, doc.name)
	op, ok := operations[name]
	if !ok || doc.kind != op.kind || len(doc.sel) != 1 || doc.sel[0].name != op.field {
		graphQLErrors(w, http.StatusBadRequest, fmt.Sprintf("the fake does not serve the %s %q as sent", doc.kind, name))
		return
	}
	root := doc.sel[0]
	f.mu.Lock()
	value, err := op.resolve(f, root.args)
	f.mu.Unlock()
	if nf, ok := errors.AsType[*notFoundError](err); ok {
		f.notFound(w, root.key(), nf.entity)
		return
	}
	if err == nil {
		value, err = project(value, root.sel)
	}
	if err != nil {
		graphQLErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	fakeforge.JSON(w, http.StatusOK, map[string]any{"data": map[string]any{root.key(): value}})
}

// graphQLErrors answers with one GraphQL error and no data.
func graphQLErrors(w http.ResponseWriter, status int, message string) {
	fakeforge.JSON(w, status, map[string]any{"errors": []any{map[string]any{"message": message}}, "data": nil})
}

// notFound answers as Linear does when an argument names no entity.
func (f *Fake) notFound(w http.ResponseWriter, path, entity string) {
	var body map[string]any
	_ = json.Unmarshal(f.fx.notFound, &body)
	e := body["errors"].([]any)[0].(map[string]any)
	e["message"], e["path"] = "Entity not found: "+entity, []any{path}
	e["extensions"].(map[string]any)["userPresentableMessage"] = "Could not find referenced " + entity + "."
	fakeforge.JSON(w, http.StatusBadRequest, body)
}

// filterOf is the filter argument, nil when there is none.
func filterOf(args map[string]any) (map[string]any, error) {
	switch v := args["filter"].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	}
	return nil, fmt.Errorf("filter: not an object")
}

// page is the objects that pass the filter, after the cursor, no more
// than first (default 50, Linear's), as a connection.
func (f *Fake) page(typ string, objs []map[string]any, args map[string]any) (any, error) {
	filter, err := filterOf(args)
	if err != nil {
		return nil, err
	}
	var passed []any
	for _, o := range objs {
		ok, err := matches(o, filter)
		if err != nil {
			return nil, err
		}
		if ok {
			passed = append(passed, o)
		}
	}
	if after, ok := args["after"].(string); ok {
		i := slices.IndexFunc(passed, func(o any) bool { return o.(map[string]any)["id"] == after })
		if i < 0 {
			return nil, fmt.Errorf("after: %q is no cursor of this list", after)
		}
		passed = passed[i+1:]
	}
	first := 50
	if n, ok := args["first"].(float64); ok {
		first = int(n)
	}
	if first < 1 || first > 250 {
		return nil, fmt.Errorf("first: %d is not between 1 and 250", first)
	}
	more := len(passed) > first
	if more {
		passed = passed[:first]
	}
	return f.connection(typ, append([]any{}, passed...), more), nil
}

func (f *Fake) resolveUsers(args map[string]any) (any, error) {
	var objs []map[string]any
	for _, u := range f.users {
		objs = append(objs, f.userObject(u))
	}
	return f.page("UserConnection", objs, args)
}

func (f *Fake) resolveTeams(args map[string]any) (any, error) {
	var objs []map[string]any
	for _, t := range f.teams {
		objs = append(objs, f.teamObject(t))
	}
	return f.page("TeamConnection", objs, args)
}

func (f *Fake) resolveIssues(args map[string]any) (any, error) {
	if o, ok := args["orderBy"]; ok && o != "createdAt" && o != nil {
		return nil, fmt.Errorf("orderBy: the fake orders by createdAt only, not %v", o)
	}
	var objs []map[string]any
	for _, n := range sortedNewestFirst(f.issues) {
		objs = append(objs, f.issueObject(n, false))
	}
	return f.page("IssueConnection", objs, args)
}

func (f *Fake) resolveIssue(args map[string]any) (any, error) {
	id, _ := args["id"].(string)
	n := f.find(id)
	if n == nil {
		return nil, &notFoundError{"Issue"}
	}
	return f.issueObject(n, false), nil
}

// resolveIssueUpdate sets the assignee (an id, or null) or the state of an
// issue; any other member of the input is refused.
func (f *Fake) resolveIssueUpdate(args map[string]any) (any, error) {
	id, _ := args["id"].(string)
	n := f.find(id)
	if n == nil {
		return nil, &notFoundError{"Issue"}
	}
	input, ok := args["input"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input: not an object")
	}
	for key, v := range input {
		switch key {
		case "assigneeId":
			if v == nil {
				n.assignee = nil
				continue
			}
			u := f.userByID(fmt.Sprint(v))
			if u == nil {
				return nil, &notFoundError{"User"}
			}
			n.assignee = u
		case "stateId":
			i := slices.IndexFunc(n.team.states, func(s *state) bool { return s.id == v })
			if i < 0 {
				return nil, &notFoundError{"WorkflowState"}
			}
			n.state = n.team.states[i]
			n.updated = f.tick()
			f.markStateTimes(n)
		default:
			return nil, fmt.Errorf("input.%s: the fake updates assigneeId and stateId only", key)
		}
	}
	n.updated = f.tick()
	f.syncID++
	return fill(f.fx.issuePayload, "IssuePayload", map[string]any{"success": true, "lastSyncId": float64(f.syncID),
		"issue": f.issueObject(n, false)}), nil
}

// resolveCommentCreate adds a comment by the key's user.
func (f *Fake) resolveCommentCreate(args map[string]any) (any, error) {
	input, ok := args["input"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input: not an object")
	}
	for key := range input {
		if key != "issueId" && key != "body" {
			return nil, fmt.Errorf("input.%s: the fake reads issueId and body only", key)
		}
	}
	id, _ := input["issueId"].(string)
	n := f.find(id)
	if n == nil {
		return nil, &notFoundError{"Issue"}
	}
	body, _ := input["body"].(string)
	if body == "" {
		return nil, fmt.Errorf("input.body: a comment needs a body")
	}
	c := &comment{id: f.newID(), issue: n, body: body, user: f.viewer, created: f.tick()}
	f.comments = append(f.comments, c)
	f.syncID++
	return fill(f.fx.commentPayload, "CommentPayload", map[string]any{"success": true, "lastSyncId": float64(f.syncID),
		"comment": f.commentObject(c)}), nil
}

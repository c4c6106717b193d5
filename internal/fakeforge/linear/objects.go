package linear

import (
	"encoding/json"
	"fmt"
	"time"
)

// fixtures are the shapes the fake's answers are built from, each taken
// from a documented example in testdata.
type fixtures struct {
	user, team, state, issue, label, relation, pageInfo, comment map[string]any
	issuePayload, commentPayload                                 map[string]any
	notFound, authentication                                     []byte
}

func (fx *fixtures) load() error {
	read := func(name string) (map[string]any, error) {
		data, err := testdata.ReadFile("testdata/" + name)
		if err != nil {
			return nil, err
		}
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
	files := map[string]map[string]any{}
	for _, name := range []string{"viewer.json", "teams.json", "issues.json", "issue_update.json", "comment_create.json"} {
		v, err := read(name)
		if err != nil {
			return err
		}
		files[name] = v
	}
	teamNode := at(files["teams.json"], "data", "teams", "nodes", 0)
	issueNode := at(files["issues.json"], "data", "issues", "nodes", 1)
	fx.user = at(files["viewer.json"], "data", "viewer")
	fx.team = teamNode
	fx.state = at(teamNode, "states", "nodes", 0)
	fx.issue = issueNode
	fx.label = at(issueNode, "labels", "nodes", 0)
	fx.relation = at(issueNode, "inverseRelations", "nodes", 0)
	fx.pageInfo = at(files["issues.json"], "data", "issues", "pageInfo")
	fx.issuePayload = at(files["issue_update.json"], "data", "issueUpdate")
	fx.commentPayload = at(files["comment_create.json"], "data", "commentCreate")
	fx.comment = at(fx.commentPayload, "comment")
	var err error
	if fx.notFound, err = testdata.ReadFile("testdata/error_not_found.json"); err != nil {
		return err
	}
	fx.authentication, err = testdata.ReadFile("testdata/error_authentication.json")
	return err
}

// at is the object at path (keys and indexes) in v.
func at(v any, path ...any) map[string]any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	return v.(map[string]any)
}

// fill is a copy of the fixture tmpl of GraphQL type typ with fields
// set. A field the fixture has not is a mistake of the fake's: it never
// adds a field the real type lacks.
func fill(tmpl map[string]any, typ string, fields map[string]any) map[string]any {
	obj := clone(tmpl).(map[string]any)
	for k, v := range fields {
		if _, ok := obj[k]; !ok {
			panic(fmt.Sprintf("fakeforge/linear: the %s fixture has no field %q", typ, k))
		}
		obj[k] = v
	}
	obj[typename] = typ
	return obj
}

// stamp is a time as Linear writes it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func stampOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return stamp(*t)
}

// connection is nodes as a connection of type typ, one page of them.
func (f *Fake) connection(typ string, nodes []any, more bool) map[string]any {
	info := map[string]any{"hasNextPage": more, "hasPreviousPage": false, "startCursor": nil, "endCursor": nil}
	if len(nodes) > 0 {
		info["startCursor"] = nodes[0].(map[string]any)["id"]
		info["endCursor"] = nodes[len(nodes)-1].(map[string]any)["id"]
	}
	return map[string]any{typename: typ, "nodes": nodes, "pageInfo": fill(f.fx.pageInfo, "PageInfo", info)}
}

func (f *Fake) userObject(u *user) map[string]any {
	return fill(f.fx.user, "User", map[string]any{"id": u.id, "name": u.name, "displayName": u.displayName, "email": u.email,
		"isMe": u == f.viewer, "url": "https://linear.app/example/profiles/" + u.displayName})
}

func (f *Fake) stateObject(s *state) map[string]any {
	return fill(f.fx.state, "WorkflowState", map[string]any{"id": s.id, "name": s.name, "type": s.typ, "position": s.position})
}

func (f *Fake) teamObject(t *team) map[string]any {
	var states []any
	for _, s := range t.states {
		states = append(states, f.stateObject(s))
	}
	return fill(f.fx.team, "Team", map[string]any{"id": t.id, "key": t.key, "name": t.name,
		"states": f.connection("WorkflowStateConnection", states, false)})
}

var priorityLabels = []string{"No priority", "Urgent", "High", "Medium", "Low"}

// issueObject is the issue as Linear answers it; its relations' issues
// (nested once) have none of their own.
func (f *Fake) issueObject(n *issue, nested bool) map[string]any {
	labels := []any{}
	for _, l := range n.labels {
		labels = append(labels, fill(f.fx.label, "IssueLabel", map[string]any{"id": l.id, "name": l.name}))
	}
	inverse := []any{}
	if !nested {
		for _, r := range f.blocks {
			if r.waiter == n {
				inverse = append(inverse, fill(f.fx.relation, "IssueRelation", map[string]any{"id": r.id, "type": "blocks",
					"createdAt": stamp(r.created), "updatedAt": stamp(r.created),
					"issue": f.issueObject(r.blocker, true), "relatedIssue": f.issueObject(r.waiter, true)}))
			}
		}
	}
	var description, assignee any
	if n.body != "" {
		description = n.body
	}
	if n.assignee != nil {
		assignee = f.userObject(n.assignee)
	}
	return fill(f.fx.issue, "Issue", map[string]any{
		"id": n.id, "identifier": n.identifier, "number": float64(n.number), "title": n.title, "description": description,
		"priority": float64(n.priority), "priorityLabel": priorityLabels[n.priority],
		"url":        "https://linear.app/example/issue/" + n.identifier + "/" + slug(n.title),
		"branchName": "ralph/" + slug(n.identifier+" "+n.title),
		"createdAt":  stamp(n.created), "updatedAt": stamp(n.updated),
		"startedAt": stampOrNil(n.started), "completedAt": stampOrNil(n.completed), "canceledAt": stampOrNil(n.canceled),
		"state": f.stateObject(n.state), "team": f.teamObject(n.team), "assignee": assignee,
		"labels":           f.connection("IssueLabelConnection", labels, false),
		"inverseRelations": f.connection("IssueRelationConnection", inverse, false),
	})
}

func (f *Fake) commentObject(c *comment) map[string]any {
	return fill(f.fx.comment, "Comment", map[string]any{"id": c.id, "body": c.body,
		"url":       "https://linear.app/example/issue/" + c.issue.identifier + "/" + slug(c.issue.title) + "#comment-" + c.id[:8],
		"createdAt": stamp(c.created), "updatedAt": stamp(c.created), "user": f.userObject(c.user)})
}

package linear

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

var _ forge.Tracker = (*Client)(nil)

// Linear's workflow state types that matter to ralph.
const (
	typeUnstarted = "unstarted"
	typeCompleted = "completed"
	typeCanceled  = "canceled"
)

// done reports whether issues in a state of type typ count as done.
func done(typ string) bool { return typ == typeCompleted || typ == typeCanceled }

// Open lists the team's open issues in the states chosen (by default its
// unstarted ones), with every label, oldest first, a page at a time.
func (c *Client) Open(ctx context.Context) ([]forge.Issue, error) {
	t, err := c.teamOf(ctx)
	if err != nil {
		return nil, err
	}
	states, err := c.openStates(t)
	if err != nil {
		return nil, err
	}
	filter := issueFilter{Team: &teamFilter{ID: &idComparator{Eq: t.ID}}, State: &stateFilter{ID: &idComparator{In: states}}}
	for _, l := range c.opts.Labels {
		filter.And = append(filter.And, issueFilter{Labels: &labelsFilter{Some: &labelFilter{Name: &stringComparator{EqIgnoreCase: l}}}})
	}
	var nodes []issueNode
	for vars := (issuesVars{Filter: filter, First: c.pageSize}); ; {
		var page issuesData
		if err := c.do(ctx, issuesQuery, vars, &page); err != nil {
			return nil, err
		}
		nodes = append(nodes, page.Issues.Nodes...)
		if !page.Issues.PageInfo.HasNextPage || page.Issues.PageInfo.EndCursor == nil {
			break
		}
		vars.After = page.Issues.PageInfo.EndCursor
	}
	// Linear's order is its own; ralph's is the oldest first, as the
	// other trackers' ties are in the order they were made.
	slices.SortStableFunc(nodes, func(a, b issueNode) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.Identifier, b.Identifier))
	})
	issues := make([]forge.Issue, 0, len(nodes))
	for _, n := range nodes {
		if is := c.issue(n); is.Open {
			issues = append(issues, is)
		}
	}
	return issues, nil
}

// openStates are the ids of the states Open lists issues in: those
// States names, or the team's unstarted ones.
func (c *Client) openStates(t *team) ([]string, error) {
	var ids, names []string
	for _, s := range t.States.Nodes {
		names = append(names, s.Name)
		if len(c.opts.States) == 0 && s.Type == typeUnstarted {
			ids = append(ids, s.ID)
		}
	}
	for _, want := range c.opts.States {
		i := slices.IndexFunc(t.States.Nodes, func(s stateNode) bool { return strings.EqualFold(s.Name, want) })
		if i < 0 {
			return nil, &hint.Error{Err: fmt.Errorf("linear: team %s has no workflow state %q", t.Key, want),
				Fix: "states: lists the names of the team's states, which are: " + strings.Join(names, ", ")}
		}
		ids = append(ids, t.States.Nodes[i].ID)
	}
	if len(ids) == 0 {
		return nil, &hint.Error{Err: fmt.Errorf("linear: team %s has no workflow state of type unstarted", t.Key),
			Fix: "name the states whose issues are ready with states:, from: " + strings.Join(names, ", ")}
	}
	return ids, nil
}

// Issue returns one issue by its identifier (ENG-12), open or not.
func (c *Client) Issue(ctx context.Context, id string) (forge.Issue, error) {
	n, err := c.node(ctx, id)
	if err != nil {
		return forge.Issue{}, err
	}
	return c.issue(n), nil
}

func (c *Client) node(ctx context.Context, id string) (issueNode, error) {
	var out issueData
	if err := c.do(ctx, issueQuery, issueVars{ID: id}, &out); err != nil {
		return issueNode{}, fmt.Errorf("issue %s: %w", id, err)
	}
	return out.Issue, nil
}

// issue is n as ralph sees it, and remembers n's id for the mutations.
func (c *Client) issue(n issueNode) forge.Issue {
	c.mu.Lock()
	c.uuids[n.Identifier] = n.ID
	c.mu.Unlock()
	is := forge.Issue{ID: n.Identifier, Title: n.Title, URL: n.URL, Open: !done(n.State.Type), Priority: priority(n.Priority)}
	if n.Description != nil {
		is.Body = *n.Description
	}
	for _, l := range n.Labels.Nodes {
		is.Labels = append(is.Labels, l.Name)
	}
	if n.Assignee != nil {
		is.Assignees = []string{n.Assignee.ID}
	}
	for _, r := range n.InverseRelations.Nodes {
		if r.Type == "blocks" && !done(r.Issue.State.Type) && !slices.Contains(is.BlockedBy, r.Issue.Identifier) {
			is.BlockedBy = append(is.BlockedBy, r.Issue.Identifier)
		}
	}
	return is
}

// priority is Linear's priority (0 none, 1 urgent … 4 low) as forge's (0
// the highest, -1 none, so that labels or the default decide).
func priority(p float64) int {
	if n := int(p); n >= 1 && n <= 4 {
		return n - 1
	}
	return -1
}

// Me is the id of the user ralph works as: Options.Assignee's, or the
// API key's.
func (c *Client) Me(ctx context.Context) (string, error) {
	c.mu.Lock()
	me := c.me
	c.mu.Unlock()
	if me != "" {
		return me, nil
	}
	me, err := c.whoami(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.me = me
	c.mu.Unlock()
	return me, nil
}

func (c *Client) whoami(ctx context.Context) (string, error) {
	who := strings.TrimSpace(c.opts.Assignee)
	if who == "" {
		var v viewerData
		if err := c.do(ctx, viewerQuery, nil, &v); err != nil {
			return "", err
		}
		return v.Viewer.ID, nil
	}
	is := &stringComparator{EqIgnoreCase: who}
	var out usersData
	if err := c.do(ctx, usersQuery, usersVars{Filter: userFilter{Or: []userFilter{{Email: is}, {DisplayName: is}, {Name: is}}}}, &out); err != nil {
		return "", err
	}
	switch users := out.Users.Nodes; len(users) {
	case 0:
		return "", &hint.Error{Err: fmt.Errorf("linear: no user of the workspace has the email, display name or name %q", who),
			Fix: "set assignee: to a user's email (or leave it out to work as the API key's user)"}
	case 1:
		return users[0].ID, nil
	default:
		var emails []string
		for _, u := range users {
			emails = append(emails, u.Email)
		}
		return "", &hint.Error{Err: fmt.Errorf("linear: %d users answer to %q: %s", len(users), who, strings.Join(emails, ", ")),
			Fix: "set assignee: to one of their emails"}
	}
}

// Assign assigns the issue to user (an id); Linear has one assignee.
func (c *Client) Assign(ctx context.Context, id, user string) error {
	return c.update(ctx, id, map[string]any{"assigneeId": user})
}

// Unassign unassigns user, and leaves an issue assigned to someone else
// as it is.
func (c *Client) Unassign(ctx context.Context, id, user string) error {
	n, err := c.node(ctx, id)
	if err != nil {
		return err
	}
	if n.Assignee == nil || n.Assignee.ID != user {
		return nil
	}
	return c.update(ctx, id, map[string]any{"assigneeId": nil})
}

// Comment adds a comment, in markdown.
func (c *Client) Comment(ctx context.Context, id, body string) error {
	uuid, err := c.uuid(ctx, id)
	if err != nil {
		return err
	}
	var vars commentCreateVars
	vars.Input.IssueID, vars.Input.Body = uuid, body
	var out commentCreateData
	if err := c.do(ctx, commentCreateMutation, vars, &out); err != nil {
		return fmt.Errorf("comment on %s: %w", id, err)
	}
	if !out.CommentCreate.Success {
		return fmt.Errorf("linear: comment on %s: Linear answered that it did not succeed", id)
	}
	return nil
}

// Close moves the issue to the team's first completed state, unless it
// is done already (completed or canceled).
func (c *Client) Close(ctx context.Context, id string) error {
	return c.moveTo(ctx, id, typeCompleted, true)
}

// Reopen moves a done issue to the team's first unstarted state.
func (c *Client) Reopen(ctx context.Context, id string) error {
	return c.moveTo(ctx, id, typeUnstarted, false)
}

// moveTo moves the issue to the first state, by position, of type typ,
// when it is not done already (toDone) or not open already.
func (c *Client) moveTo(ctx context.Context, id, typ string, toDone bool) error {
	t, err := c.teamOf(ctx)
	if err != nil {
		return err
	}
	n, err := c.node(ctx, id)
	if err != nil {
		return err
	}
	if done(n.State.Type) == toDone {
		return nil
	}
	var first *stateNode
	for i, s := range t.States.Nodes {
		if s.Type == typ && (first == nil || s.Position < first.Position) {
			first = &t.States.Nodes[i]
		}
	}
	if first == nil {
		return fmt.Errorf("linear: team %s has no workflow state of type %s to move %s to", t.Key, typ, id)
	}
	return c.update(ctx, id, map[string]any{"stateId": first.ID})
}

func (c *Client) update(ctx context.Context, id string, input map[string]any) error {
	uuid, err := c.uuid(ctx, id)
	if err != nil {
		return err
	}
	var out issueUpdateData
	if err := c.do(ctx, issueUpdateMutation, issueUpdateVars{ID: uuid, Input: input}, &out); err != nil {
		return fmt.Errorf("update %s: %w", id, err)
	}
	if !out.IssueUpdate.Success {
		return fmt.Errorf("linear: update %s: Linear answered that it did not succeed", id)
	}
	return nil
}

// uuid is the id of the issue whose identifier is id: mutations take
// ids, which Open and Issue learn.
func (c *Client) uuid(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	uuid, ok := c.uuids[id]
	c.mu.Unlock()
	if ok {
		return uuid, nil
	}
	n, err := c.node(ctx, id)
	if err != nil {
		return "", err
	}
	c.issue(n)
	return n.ID, nil
}

// teamOf is the team Options.Team names, asked of Linear once.
func (c *Client) teamOf(ctx context.Context) (*team, error) {
	c.mu.Lock()
	t := c.team
	c.mu.Unlock()
	if t != nil {
		return t, nil
	}
	var out teamData
	if err := c.do(ctx, teamQuery, teamVars{Filter: teamFilter{Key: &stringComparator{EqIgnoreCase: c.opts.Team}}}, &out); err != nil {
		return nil, err
	}
	if len(out.Teams.Nodes) == 0 {
		return nil, &hint.Error{Err: fmt.Errorf("linear: no team with the key %q that the API key can see", c.opts.Team),
			Fix: "team: is the team's key, the prefix of its issues' identifiers (ENG in ENG-12); a key limited to some teams must include it"}
	}
	t = &out.Teams.Nodes[0]
	c.mu.Lock()
	c.team = t
	c.mu.Unlock()
	return t, nil
}

package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

// Open lists the project's open issues that have every label of
// Options.Labels, oldest first, each with the open issues that block it.
//
// Blocking links ("blocks", "is_blocked_by") are GitLab Premium's, and no
// answer of the issue list says whether an issue is blocked: GitLab
// exposed blocking_issues_count on some versions, but it counts the issues
// an issue blocks, not those blocking it, and current GitLab no longer
// sends it. What the list does say is the tier: issues carry `weight` on
// Premium and Ultimate only, the tier blocking links come with. So the
// links of an issue are asked for (one request each) only where its answer
// has a weight; on GitLab Free, listing n issues costs ceil(n/100)
// requests and nothing more.
func (c *Client) Open(ctx context.Context) ([]forge.Issue, error) {
	opts := &gl.ListProjectIssuesOptions{
		ListOptions: gl.ListOptions{PerPage: 100, Page: 1},
		State:       gl.Ptr("opened"),
		OrderBy:     gl.Ptr("created_at"),
		Sort:        gl.Ptr("asc"),
	}
	if len(c.labels) > 0 {
		labels := gl.LabelOptions(c.labels)
		opts.Labels = &labels
	}
	var out []forge.Issue
	for {
		var page []json.RawMessage
		resp, err := c.get(ctx, c.projectPath("issues"), opts, &page)
		if errors.Is(err, gl.ErrNotFound) {
			return nil, c.projectNotFound()
		}
		if err != nil {
			return nil, explain(fmt.Errorf("gitlab: list the open issues of %s: %w", c.project, err))
		}
		for _, raw := range page {
			is, err := c.issueOf(ctx, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, is)
		}
		// Pages are asked for by number: an issue closed meanwhile moves
		// the rest up and one may be missed this time, never listed twice
		// or listed closed; the next look finds it.
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Issue returns issue id (its iid), open or not, with its open blockers.
func (c *Client) Issue(ctx context.Context, id string) (forge.Issue, error) {
	iid, err := c.iid(id)
	if err != nil {
		return forge.Issue{}, err
	}
	var raw json.RawMessage
	if _, err := c.get(ctx, c.projectPath("issues/"+strconv.FormatInt(iid, 10)), nil, &raw); err != nil {
		return forge.Issue{}, c.issueErr(iid, "read", err)
	}
	return c.issueOf(ctx, raw)
}

// Me is the username of the token's user.
func (c *Client) Me(ctx context.Context) (string, error) {
	u, _, err := c.gl.Users.CurrentUser(gl.WithContext(ctx))
	if err != nil {
		return "", explain(fmt.Errorf("gitlab: who the token belongs to: %w", err))
	}
	c.remember(u.Username, u.ID)
	return u.Username, nil
}

// Assign adds user to the issue's assignees. GitLab Free keeps one
// assignee per issue: an issue someone else has stays theirs, which is an
// error here.
func (c *Client) Assign(ctx context.Context, id, user string) error {
	is, err := c.glIssue(ctx, id)
	if err != nil {
		return err
	}
	if assigned(is, user) {
		return nil
	}
	uid, err := c.userID(ctx, user)
	if err != nil {
		return err
	}
	ids := append(assigneeIDs(is, ""), uid)
	updated, _, err := c.gl.Issues.UpdateIssue(c.project, is.IID, &gl.UpdateIssueOptions{AssigneeIDs: &ids}, gl.WithContext(ctx))
	if err != nil {
		return c.issueErr(is.IID, "assign "+user+" to", err)
	}
	if !assigned(updated, user) {
		return fmt.Errorf("gitlab: issue %d of %s is still assigned to %s, not %s: GitLab Free has one assignee per issue",
			is.IID, c.project, strings.Join(usernames(updated), ", "), user)
	}
	return nil
}

// Unassign removes user from the issue's assignees, keeping the others.
func (c *Client) Unassign(ctx context.Context, id, user string) error {
	is, err := c.glIssue(ctx, id)
	if err != nil {
		return err
	}
	if !assigned(is, user) {
		return nil
	}
	ids := assigneeIDs(is, user)
	if len(ids) == 0 {
		// GitLab's word for "nobody".
		ids = []int64{0}
	}
	_, _, err = c.gl.Issues.UpdateIssue(c.project, is.IID, &gl.UpdateIssueOptions{AssigneeIDs: &ids}, gl.WithContext(ctx))
	return c.issueErr(is.IID, "unassign "+user+" from", err)
}

// Comment adds a note to the issue.
func (c *Client) Comment(ctx context.Context, id, body string) error {
	iid, err := c.iid(id)
	if err != nil {
		return err
	}
	_, _, err = c.gl.Notes.CreateIssueNote(c.project, iid, &gl.CreateIssueNoteOptions{Body: &body}, gl.WithContext(ctx))
	return c.issueErr(iid, "comment on", err)
}

// Close closes the issue; closing a closed one changes nothing.
func (c *Client) Close(ctx context.Context, id string) error {
	return c.setState(ctx, id, "close")
}

// Reopen opens the issue again.
func (c *Client) Reopen(ctx context.Context, id string) error {
	return c.setState(ctx, id, "reopen")
}

func (c *Client) setState(ctx context.Context, id, event string) error {
	iid, err := c.iid(id)
	if err != nil {
		return err
	}
	_, _, err = c.gl.Issues.UpdateIssue(c.project, iid, &gl.UpdateIssueOptions{StateEvent: &event}, gl.WithContext(ctx))
	return c.issueErr(iid, event, err)
}

// issueOf is an issue of GitLab's answer (a list's or a single issue's),
// with the open issues blocking it where the project's tier has blocking
// links.
func (c *Client) issueOf(ctx context.Context, raw json.RawMessage) (forge.Issue, error) {
	var is gl.Issue
	if err := json.Unmarshal(raw, &is); err != nil {
		return forge.Issue{}, fmt.Errorf("gitlab: an issue of %s GitLab answered: %w", c.project, err)
	}
	out := forge.Issue{ID: strconv.FormatInt(is.IID, 10), Title: is.Title, Body: is.Description, URL: is.WebURL,
		Open: is.State == "opened", Labels: []string(is.Labels), Assignees: usernames(&is), Priority: -1}
	if !hasField(raw, "weight") {
		return out, nil
	}
	blockers, err := c.blockers(ctx, &is)
	if err != nil {
		return forge.Issue{}, err
	}
	out.BlockedBy = blockers
	return out, nil
}

// blockers are the open issues that block is: its iid for one of the
// project's, group/name#iid (or the issue's URL) for another project's.
func (c *Client) blockers(ctx context.Context, is *gl.Issue) ([]string, error) {
	relations, _, err := c.gl.IssueLinks.ListIssueRelations(c.project, is.IID, gl.WithContext(ctx))
	if err != nil {
		return nil, c.issueErr(is.IID, "list the links of", err)
	}
	var out []string
	for _, r := range relations {
		if r.LinkType != "is_blocked_by" || r.State != "opened" {
			continue
		}
		switch {
		case r.ProjectID == is.ProjectID:
			out = append(out, strconv.FormatInt(r.IID, 10))
		case r.References != nil && r.References.Full != "":
			out = append(out, r.References.Full)
		default:
			out = append(out, r.WebURL)
		}
	}
	return out, nil
}

// hasField reports whether a JSON object has the field, null or not.
func hasField(raw json.RawMessage, name string) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields[name]
	return ok
}

// glIssue is issue id as GitLab's client reads it.
func (c *Client) glIssue(ctx context.Context, id string) (*gl.Issue, error) {
	iid, err := c.iid(id)
	if err != nil {
		return nil, err
	}
	is, _, err := c.gl.Issues.GetIssue(c.project, iid, gl.WithContext(ctx))
	if err != nil {
		return nil, c.issueErr(iid, "read", err)
	}
	return is, nil
}

// iid reads an issue's id: its iid, a number. Any other id names no issue
// of the project.
func (c *Client) iid(id string) (int64, error) {
	iid, err := strconv.ParseInt(strings.TrimPrefix(id, "#"), 10, 64)
	if err != nil || iid <= 0 {
		return 0, fmt.Errorf("gitlab: %q is not an issue of %s, whose issues are numbered (#12 is 12): %w", id, c.project, forge.ErrNotFound)
	}
	return iid, nil
}

// issueErr is what failed when ralph did what to issue iid; nil for no
// error, one wrapping forge.ErrNotFound when GitLab has no such issue.
func (c *Client) issueErr(iid int64, what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gl.ErrNotFound):
		return fmt.Errorf("gitlab: %s issue %d of %s: %w", what, iid, c.project, forge.ErrNotFound)
	}
	return explain(fmt.Errorf("gitlab: %s issue %d of %s: %w", what, iid, c.project, err))
}

func (c *Client) projectNotFound() error {
	return &hint.Error{Err: fmt.Errorf("gitlab: there is no project %s, or the token cannot see it: %w", c.project, forge.ErrNotFound),
		Fix: "check autopilot.source.project (group/name as in the project's URL, or its numeric id), and api_url for a self-hosted GitLab"}
}

// explain adds what to do to the errors a person can fix: a token GitLab
// does not take, or one without the rights.
func explain(err error) error {
	switch {
	case gl.HasStatusCode(err, http.StatusUnauthorized):
		return &hint.Error{Err: err, Fix: "the token is not valid on this GitLab (expired, revoked, or for another GitLab): " +
			"create a personal, project or group access token with the api scope"}
	case gl.HasStatusCode(err, http.StatusForbidden):
		return &hint.Error{Err: err, Fix: "the token's user may not do this in the project: it needs the api scope " +
			"(read_api only reads) and at least the Reporter role (Developer to open merge requests)"}
	}
	return err
}

// userID is the id of the user named username, asked of GitLab once.
func (c *Client) userID(ctx context.Context, username string) (int64, error) {
	c.mu.Lock()
	id, ok := c.userIDs[strings.ToLower(username)]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	users, _, err := c.gl.Users.ListUsers(&gl.ListUsersOptions{Username: &username}, gl.WithContext(ctx))
	if err != nil {
		return 0, explain(fmt.Errorf("gitlab: look up user %s: %w", username, err))
	}
	if len(users) == 0 {
		return 0, &hint.Error{Err: fmt.Errorf("gitlab: there is no user %q to assign issues to", username),
			Fix: "set autopilot.source.assignee to a GitLab username, or leave it out to assign the token's user"}
	}
	c.remember(username, users[0].ID)
	return users[0].ID, nil
}

func (c *Client) remember(username string, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.userIDs[strings.ToLower(username)] = id
}

func assigned(is *gl.Issue, user string) bool {
	return slices.ContainsFunc(is.Assignees, func(a *gl.IssueAssignee) bool { return strings.EqualFold(a.Username, user) })
}

// assigneeIDs are the ids of the issue's assignees but except's.
func assigneeIDs(is *gl.Issue, except string) []int64 {
	ids := []int64{}
	for _, a := range is.Assignees {
		if except == "" || !strings.EqualFold(a.Username, except) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

func usernames(is *gl.Issue) []string {
	var out []string
	for _, a := range is.Assignees {
		out = append(out, a.Username)
	}
	return out
}

// get sends a GET for path and decodes the answer into v, for the answers
// ralph reads more of than GitLab's client keeps (whether a field is
// there at all).
func (c *Client) get(ctx context.Context, path string, opt any, v any) (*gl.Response, error) {
	req, err := c.gl.NewRequest(http.MethodGet, path, opt, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return nil, err
	}
	return c.gl.Do(req, v)
}

func (c *Client) projectPath(rest string) string {
	return "projects/" + gl.PathEscape(c.project) + "/" + rest
}

package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v75/github"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

// The relations an issue waits on, as paths under the issue.
const (
	dependenciesPath = "dependencies/blocked_by"
	subIssuesPath    = "sub_issues"
)

// perPage is the most GitHub gives on one page.
const perPage = 100

// issueJSON is an issue as GitHub's REST API answers it, with the
// summaries of its relations that go-github's Issue does not have. A
// summary is nil when the server did not send it (a GitHub Enterprise
// Server older than the feature).
type issueJSON struct {
	gh.Issue
	SubIssuesSummary *struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
	} `json:"sub_issues_summary"`
	Dependencies *struct {
		// BlockedBy counts the open issues this one is blocked by.
		BlockedBy int `json:"blocked_by"`
	} `json:"issue_dependencies_summary"`
}

// Open lists the open issues with every label of Options.Labels, oldest
// first, with the open issues each waits for.
func (c *Client) Open(ctx context.Context) ([]forge.Issue, error) {
	q := url.Values{"state": {"open"}, "sort": {"created"}, "direction": {"asc"}, "per_page": {strconv.Itoa(perPage)}}
	if len(c.labels) > 0 {
		q.Set("labels", strings.Join(c.labels, ","))
	}
	var out []forge.Issue
	for page := 1; page != 0; {
		q.Set("page", strconv.Itoa(page))
		var batch []*issueJSON
		resp, err := c.get(ctx, c.path("issues")+"?"+q.Encode(), &batch)
		if err != nil {
			return nil, apiError("list the open issues of "+c.Repo(), err)
		}
		for _, is := range batch {
			if is.IsPullRequest() {
				continue // the issues API lists pull requests too
			}
			issue, err := c.issue(ctx, is)
			if err != nil {
				return nil, err
			}
			out = append(out, issue)
		}
		page = resp.NextPage
	}
	return out, nil
}

// Issue returns issue id (its number), open or not.
func (c *Client) Issue(ctx context.Context, id string) (forge.Issue, error) {
	n, err := number(id)
	if err != nil {
		return forge.Issue{}, err
	}
	var is issueJSON
	if _, err := c.get(ctx, fmt.Sprintf("%s/%d", c.path("issues"), n), &is); err != nil {
		return forge.Issue{}, apiError(fmt.Sprintf("issue #%d of %s", n, c.Repo()), err)
	}
	if is.IsPullRequest() {
		return forge.Issue{}, fmt.Errorf("github: #%d of %s is a pull request, not an issue: %w", n, c.Repo(), forge.ErrNotFound)
	}
	return c.issue(ctx, &is)
}

// issue is is in ralph's terms, with its open blockers when it is open.
func (c *Client) issue(ctx context.Context, is *issueJSON) (forge.Issue, error) {
	out := forge.Issue{ID: strconv.Itoa(is.GetNumber()), Title: is.GetTitle(), Body: is.GetBody(), URL: is.GetHTMLURL(),
		Open: is.GetState() == "open", Priority: -1}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range is.Assignees {
		out.Assignees = append(out.Assignees, a.GetLogin())
	}
	if !out.Open {
		return out, nil
	}
	var err error
	out.BlockedBy, err = c.blockers(ctx, is)
	return out, err
}

// blockers are the open issues is waits for: those it is blocked by and
// its sub-issues, each asked of GitHub only when is's summary says there
// may be one.
func (c *Client) blockers(ctx context.Context, is *issueJSON) ([]string, error) {
	var out []string
	if d := is.Dependencies; d == nil || d.BlockedBy > 0 {
		open, err := c.openRelated(ctx, is.GetNumber(), dependenciesPath)
		if err != nil {
			return nil, err
		}
		out = append(out, open...)
	}
	// completed counts the closed sub-issues; when they are all closed,
	// none blocks.
	if s := is.SubIssuesSummary; s == nil || s.Total > s.Completed {
		open, err := c.openRelated(ctx, is.GetNumber(), subIssuesPath)
		if err != nil {
			return nil, err
		}
		for _, id := range open {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// openRelated lists the ids of the open issues related to issue n by rel,
// every page of them.
func (c *Client) openRelated(ctx context.Context, n int, rel string) ([]string, error) {
	if c.lacks(rel) {
		return nil, nil
	}
	var out []string
	for page := 1; page != 0; {
		var batch []*gh.Issue
		resp, err := c.get(ctx, fmt.Sprintf("%s/%d/%s?per_page=%d&page=%d", c.path("issues"), n, rel, perPage, page), &batch)
		if notFound(err) {
			// The issue was just read, so it is the endpoint that is
			// missing: a server without dependencies or sub-issues.
			c.lack(rel)
			return nil, nil
		}
		if err != nil {
			return nil, apiError(fmt.Sprintf("what #%d of %s waits for (%s)", n, c.Repo(), rel), err)
		}
		for _, b := range batch {
			if b.GetState() == "open" {
				out = append(out, c.ref(b))
			}
		}
		page = resp.NextPage
	}
	return out, nil
}

func (c *Client) lacks(rel string) bool {
	c.lackMu.Lock()
	defer c.lackMu.Unlock()
	return c.lacking[rel]
}

func (c *Client) lack(rel string) {
	c.lackMu.Lock()
	defer c.lackMu.Unlock()
	c.lacking[rel] = true
}

// ref is the id of issue is: its number in this repository, else
// "owner/name#number", which no issue of this repository has, so it
// blocks until it is closed however ralph looks at it.
func (c *Client) ref(is *gh.Issue) string {
	n := strconv.Itoa(is.GetNumber())
	_, repo, ok := strings.Cut(is.GetRepositoryURL(), "/repos/")
	if !ok || strings.EqualFold(repo, c.Repo()) {
		return n
	}
	return repo + "#" + n
}

// number is the issue number id names ("42" or "#42").
func number(id string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "#"))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("github: %q is not an issue number: %w", id, forge.ErrNotFound)
	}
	return n, nil
}

// Me is the login of the token's user.
func (c *Client) Me(ctx context.Context) (string, error) {
	u, _, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return "", apiError("the token's user", err)
	}
	return u.GetLogin(), nil
}

// Assign adds user to the issue's assignees. GitHub answers success but
// leaves out a user who cannot be assigned (one without access to the
// repository), so the answer is checked.
func (c *Client) Assign(ctx context.Context, id, user string) error {
	n, err := number(id)
	if err != nil {
		return err
	}
	is, _, err := c.gh.Issues.AddAssignees(ctx, c.owner, c.name, n, []string{user})
	if err != nil {
		return apiError(fmt.Sprintf("assign #%d of %s to %s", n, c.Repo(), user), err)
	}
	if !slices.ContainsFunc(is.Assignees, func(a *gh.User) bool { return strings.EqualFold(a.GetLogin(), user) }) {
		return &hint.Error{Err: fmt.Errorf("github: GitHub did not assign #%d of %s to %s", n, c.Repo(), user),
			Fix: "GitHub assigns only people who can push to the repository: give " + user + " access, or set autopilot.source.assignee"}
	}
	return nil
}

// Unassign removes user from the issue's assignees.
func (c *Client) Unassign(ctx context.Context, id, user string) error {
	n, err := number(id)
	if err != nil {
		return err
	}
	_, _, err = c.gh.Issues.RemoveAssignees(ctx, c.owner, c.name, n, []string{user})
	return apiError(fmt.Sprintf("unassign %s from #%d of %s", user, n, c.Repo()), err)
}

// Comment adds a comment to the issue.
func (c *Client) Comment(ctx context.Context, id, body string) error {
	n, err := number(id)
	if err != nil {
		return err
	}
	_, _, err = c.gh.Issues.CreateComment(ctx, c.owner, c.name, n, &gh.IssueComment{Body: &body})
	return apiError(fmt.Sprintf("comment on #%d of %s", n, c.Repo()), err)
}

// Close closes the issue as completed.
func (c *Client) Close(ctx context.Context, id string) error {
	return c.setState(ctx, id, "closed", "completed")
}

// Reopen opens the issue again.
func (c *Client) Reopen(ctx context.Context, id string) error {
	return c.setState(ctx, id, "open", "")
}

func (c *Client) setState(ctx context.Context, id, state, reason string) error {
	n, err := number(id)
	if err != nil {
		return err
	}
	req := &gh.IssueRequest{State: &state}
	if reason != "" {
		req.StateReason = &reason
	}
	_, _, err = c.gh.Issues.Edit(ctx, c.owner, c.name, n, req)
	return apiError(fmt.Sprintf("set #%d of %s %s", n, c.Repo(), state), err)
}

// get asks GitHub for path, relative to the API's root, into v: for the
// answers go-github's types leave fields of out.
func (c *Client) get(ctx context.Context, path string, v any) (*gh.Response, error) {
	req, err := c.gh.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return c.gh.Do(ctx, req, v)
}

// path is rest under the repository's API path.
func (c *Client) path(rest string) string {
	return "repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.name) + "/" + rest
}

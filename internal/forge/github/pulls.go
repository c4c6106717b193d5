package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v75/github"

	"github.com/ralph-loop/ralph/internal/forge"
)

// Pulls is the repository's pull requests.
func (c *Client) Pulls() forge.PullRequests { return pulls{c} }

type pulls struct{ c *Client }

var _ forge.PullRequests = pulls{}

// Open opens change as a pull request, unless one from its head onto its
// base is open already, and adds its labels (again, which changes
// nothing, when the pull request had them: a restart after the request
// and before the labels still labels it).
func (p pulls) Open(ctx context.Context, change forge.Change) (forge.PullRequest, error) {
	c := p.c
	what := fmt.Sprintf("open a pull request of %s from %s onto %s", c.Repo(), change.Head, change.Base)
	pr, err := p.find(ctx, change)
	if err != nil {
		return forge.PullRequest{}, apiError(what, err)
	}
	if pr == nil {
		pr, _, err = c.gh.PullRequests.Create(ctx, c.owner, c.name, &gh.NewPullRequest{
			Title: &change.Title, Body: &change.Body, Head: &change.Head, Base: &change.Base})
		if exists(err) {
			// Opened between the look and the request (by an earlier
			// attempt GitHub had not listed yet).
			pr, err = p.find(ctx, change)
			if err == nil && pr == nil {
				err = fmt.Errorf("GitHub says one is open, and lists none")
			}
		}
		if err != nil {
			return forge.PullRequest{}, apiError(what, err)
		}
	}
	if len(change.Labels) > 0 {
		if _, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.name, pr.GetNumber(), change.Labels); err != nil {
			return forge.PullRequest{}, apiError(fmt.Sprintf("label pull request #%d of %s", pr.GetNumber(), c.Repo()), err)
		}
	}
	return pullRequest(pr), nil
}

// find is the open pull request from change's head onto its base; nil
// when there is none.
func (p pulls) find(ctx context.Context, change forge.Change) (*gh.PullRequest, error) {
	c := p.c
	head := change.Head
	if !strings.Contains(head, ":") {
		head = c.owner + ":" + head // the list filters by owner:branch
	}
	open, _, err := c.gh.PullRequests.List(ctx, c.owner, c.name, &gh.PullRequestListOptions{
		State: "open", Head: head, Base: change.Base, ListOptions: gh.ListOptions{PerPage: perPage}})
	if err != nil || len(open) == 0 {
		return nil, err
	}
	return open[0], nil
}

// exists reports whether err is GitHub's refusal of a second open pull
// request from one head onto one base.
func exists(err error) bool {
	resp, ok := errors.AsType[*gh.ErrorResponse](err)
	if !ok || resp.Response == nil || resp.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	for _, e := range resp.Errors {
		if strings.Contains(e.Message, "already exists") {
			return true
		}
	}
	return false
}

// Get returns pull request number.
func (p pulls) Get(ctx context.Context, number int) (forge.PullRequest, error) {
	c := p.c
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.name, number)
	if err != nil {
		return forge.PullRequest{}, apiError(fmt.Sprintf("pull request #%d of %s", number, c.Repo()), err)
	}
	return pullRequest(pr), nil
}

// pullRequest is pr in ralph's terms. GitHub computes whether an open
// pull request merges in the background, and says mergeable: null until
// it has: that is no conflict yet.
func pullRequest(pr *gh.PullRequest) forge.PullRequest {
	out := forge.PullRequest{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), State: forge.StateOpen,
		Head: pr.GetHead().GetRef(), Base: pr.GetBase().GetRef(), HeadSHA: pr.GetHead().GetSHA()}
	switch {
	case pr.GetMerged() || pr.MergedAt != nil:
		out.State, out.MergeCommit = forge.StateMerged, pr.GetMergeCommitSHA()
	case pr.GetState() == "closed":
		out.State = forge.StateClosed
	default:
		out.Conflicts = pr.Mergeable != nil && !*pr.Mergeable || pr.GetMergeableState() == "dirty"
	}
	return out
}

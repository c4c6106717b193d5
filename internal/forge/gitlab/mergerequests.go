package gitlab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/ralph-loop/ralph/internal/forge"
)

// Pulls is the project's merge requests, as forge.PullRequests: a
// pull request's Number is a merge request's iid.
func (c *Client) Pulls() forge.PullRequests { return mergeRequests{c} }

type mergeRequests struct{ c *Client }

// Open opens a merge request from change.Head onto change.Base in the
// project, or returns the open one between them: GitLab allows one, and
// answers a second with 409 Conflict, which a merge request opened
// meanwhile (by an earlier ralph that stopped before recording it) is
// looked for again on.
func (m mergeRequests) Open(ctx context.Context, change forge.Change) (forge.PullRequest, error) {
	if pr, ok, err := m.find(ctx, change); err != nil || ok {
		return pr, err
	}
	opts := &gl.CreateMergeRequestOptions{
		Title:        &change.Title,
		Description:  &change.Body,
		SourceBranch: &change.Head,
		TargetBranch: &change.Base,
	}
	if len(change.Labels) > 0 {
		labels := gl.LabelOptions(change.Labels)
		opts.Labels = &labels
	}
	mr, _, err := m.c.gl.MergeRequests.CreateMergeRequest(m.c.project, opts, gl.WithContext(ctx))
	if gl.HasStatusCode(err, http.StatusConflict) {
		if pr, ok, findErr := m.find(ctx, change); findErr == nil && ok {
			return pr, nil
		}
	}
	if err != nil {
		return forge.PullRequest{}, explain(fmt.Errorf("gitlab: open a merge request from %s into %s in %s: %w", change.Head, change.Base, m.c.project, err))
	}
	return pullRequest(&mr.BasicMergeRequest), nil
}

// find is the open merge request from change.Head onto change.Base.
func (m mergeRequests) find(ctx context.Context, change forge.Change) (forge.PullRequest, bool, error) {
	opts := &gl.ListProjectMergeRequestsOptions{
		State:        gl.Ptr("opened"),
		SourceBranch: &change.Head,
		TargetBranch: &change.Base,
	}
	list, _, err := m.c.gl.MergeRequests.ListProjectMergeRequests(m.c.project, opts, gl.WithContext(ctx))
	if errors.Is(err, gl.ErrNotFound) {
		return forge.PullRequest{}, false, m.c.projectNotFound()
	}
	if err != nil {
		return forge.PullRequest{}, false, explain(fmt.Errorf("gitlab: look for a merge request from %s into %s in %s: %w", change.Head, change.Base, m.c.project, err))
	}
	if len(list) == 0 {
		return forge.PullRequest{}, false, nil
	}
	return pullRequest(list[0]), true, nil
}

// Get returns merge request number (its iid).
func (m mergeRequests) Get(ctx context.Context, number int) (forge.PullRequest, error) {
	mr, _, err := m.c.gl.MergeRequests.GetMergeRequest(m.c.project, int64(number), nil, gl.WithContext(ctx))
	if errors.Is(err, gl.ErrNotFound) {
		return forge.PullRequest{}, fmt.Errorf("gitlab: merge request !%d of %s: %w", number, m.c.project, forge.ErrNotFound)
	}
	if err != nil {
		return forge.PullRequest{}, explain(fmt.Errorf("gitlab: read merge request !%d of %s: %w", number, m.c.project, err))
	}
	return pullRequest(&mr.BasicMergeRequest), nil
}

// pullRequest is a merge request in forge's terms. "locked" is GitLab's
// state while a merge is being made: still open until it is merged.
// Conflicts is what GitLab last computed (has_conflicts, or the detailed
// status "conflict"); false while it has not.
func pullRequest(mr *gl.BasicMergeRequest) forge.PullRequest {
	pr := forge.PullRequest{Number: int(mr.IID), URL: mr.WebURL, State: forge.StateOpen, Head: mr.SourceBranch,
		Base: mr.TargetBranch, HeadSHA: mr.SHA}
	switch mr.State {
	case "merged":
		pr.State = forge.StateMerged
		// A project that merges without merge commits gives the target
		// branch the squash commit, or the head itself (fast-forward).
		pr.MergeCommit = cmp.Or(mr.MergeCommitSHA, mr.SquashCommitSHA, mr.SHA)
	case "closed":
		pr.State = forge.StateClosed
	default:
		pr.Conflicts = mr.HasConflicts || mr.DetailedMergeStatus == "conflict"
	}
	return pr
}

// Package github is a GitHub repository as ralph uses it, through
// go-github: its issues as a forge.Tracker and its pull requests as
// forge.PullRequests (Client.Pulls), on github.com or a GitHub Enterprise
// server.
//
// # Issues
//
// Open lists the repository's open issues with every label of
// Options.Labels, oldest first, every page of them, leaving out the pull
// requests that GitHub's issues API lists too. An issue waits for the
// open issues it is "blocked by" (GitHub's issue dependencies) and for
// its open sub-issues. Both are asked of GitHub only for the issues whose
// list entry says they have some (issue_dependencies_summary.blocked_by,
// sub_issues_summary), so a backlog without dependencies costs one
// request a page. A blocker in another repository blocks all the same;
// its id is "owner/name#number", which no issue of this repository has.
// GitHub has no priority field: Priority is -1, and the P0…P3 labels
// decide (tasks.NewForgeSource).
//
// # Pull requests
//
// Pulls().Open looks for the open pull request from the change's head
// (owner:branch) onto its base before opening one, so a restart between
// the request and its record opens no second, and adds the change's
// labels either way. Get says merged (merged, or merged_at set, with
// merge_commit_sha), closed unmerged, or open, and conflicting when
// GitHub says mergeable: false (mergeable_state "dirty"); mergeable: null
// means GitHub has not computed it yet, which is no conflict so far.
//
// # Errors
//
// Rate limits are waited out by forge.RateLimited beneath go-github; a
// limit still in force when ralph stops waiting is an error wrapping a
// *forge.RateLimitError naming when it resets. A missing issue or pull
// request wraps forge.ErrNotFound; a token GitHub refuses says how to fix
// it (hint.Of).
package github

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	gh "github.com/google/go-github/v75/github"

	"github.com/ralph-loop/ralph/internal/forge"
)

// Options say which repository, where and as whom.
type Options struct {
	// Repo is owner/name.
	Repo string
	// APIURL is a GitHub Enterprise server's API
	// (https://github.example.com/api/v3); "" is github.com's.
	APIURL string
	// Token authenticates every request.
	Token string
	// Labels select the issues Open lists: those with every one.
	Labels []string
	// Wait is told before a rate limit's wait.
	Wait forge.Waiter
	// Transport sends the requests; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// Client is one repository on GitHub.
type Client struct {
	gh          *gh.Client
	owner, name string
	labels      []string

	// lacking are the relation endpoints (dependenciesPath, subIssuesPath)
	// this server answered 404 for: a GitHub Enterprise Server older than
	// the feature. They are not asked again, and relate nothing.
	lackMu  sync.Mutex
	lacking map[string]bool
}

// New is the client of the repository o names.
func New(o Options) (*Client, error) {
	owner, name, ok := strings.Cut(o.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github: repository %q is not owner/name", o.Repo)
	}
	httpClient := &http.Client{Transport: &forge.RateLimited{Next: o.Transport, Wait: o.Wait}}
	client := gh.NewClient(httpClient).WithAuthToken(o.Token)
	if o.APIURL != "" {
		var err error
		if client, err = client.WithEnterpriseURLs(o.APIURL, o.APIURL); err != nil {
			return nil, fmt.Errorf("github: api_url %q: %w", o.APIURL, err)
		}
	}
	return &Client{gh: client, owner: owner, name: name, labels: o.Labels, lacking: map[string]bool{}}, nil
}

// Repo is the repository's owner/name.
func (c *Client) Repo() string { return c.owner + "/" + c.name }

var _ forge.Tracker = (*Client)(nil)

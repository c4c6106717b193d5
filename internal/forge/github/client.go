// Package github is a GitHub repository as ralph uses it, through
// go-github: its issues as a forge.Tracker and its pull requests as
// forge.PullRequests, on github.com or a GitHub Enterprise server.
package github

import (
	"fmt"
	"net/http"
	"strings"

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
	return &Client{gh: client, owner: owner, name: name, labels: o.Labels}, nil
}
